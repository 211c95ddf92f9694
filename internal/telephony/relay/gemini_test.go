package relay_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/geminilive"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// geminiRig is one call relayed to the Gemini Live fake.
type geminiRig struct {
	*rig
	fake *geminilivefake.Server
	live *geminilivefake.Session
}

func geminiSetup(handle string) []byte {
	r := map[string]any{}
	if handle != "" {
		r["handle"] = handle
	}
	b, _ := json.Marshal(map[string]any{"setup": map[string]any{"model": "models/gemini-live", "sessionResumption": r,
		"generationConfig": map[string]any{"responseModalities": []string{"AUDIO"}}}})
	return b
}

func newGeminiRig(t *testing.T, tools relay.Tools) *geminiRig {
	t.Helper()
	return newTracedGeminiRig(t, tools, nil)
}

// newTracedGeminiRig is newGeminiRig with the relay's Tracer set.
func newTracedGeminiRig(t *testing.T, tools relay.Tools, tracer trace.Tracer) *geminiRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	fake := geminilivefake.New("g-test")
	t.Cleanup(fake.Close)
	r := &rig{t: t, ctx: ctx, result: make(chan relay.Result, 1), call: make(chan *relay.Call, 1), events: make(chan relay.Event, 1000)}
	dial := func(ctx context.Context) (*relay.Socket, error) {
		s, _, err := relay.Dial(ctx, strings.Replace(fake.URL(), "http", "ws", 1)+geminilivefake.PathLive,
			&websocket.DialOptions{HTTPHeader: http.Header{"x-goog-api-key": {"g-test"}}})
		return s, err
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		carrier, err := relay.Accept(w, req, nil)
		if err != nil {
			return
		}
		for range 2 {
			if _, _, err := carrier.Read(ctx); err != nil {
				return
			}
		}
		model, err := dial(ctx)
		if err != nil {
			t.Errorf("dial model: %v", err)
			return
		}
		c := relay.New(carrier, model, relay.Options{
			StreamSID: "MZ1", Tools: tools, EndDelayLimit: 5 * time.Second,
			SpeakFirst: geminilive.TextInput("Greet the caller."),
			OnEvent:    func(e relay.Event) { r.events <- e },
			Gemini:     &relay.GeminiOptions{Setup: geminiSetup, Dial: dial},
			Tracer:     tracer,
		})
		r.call <- c
		r.result <- c.Run(context.Background())
	}))
	t.Cleanup(srv.Close)
	carrier, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	carrier.SetReadLimit(1 << 20)
	t.Cleanup(func() { carrier.CloseNow() })
	r.carrier = carrier
	r.send(`{"event":"connected","protocol":"Call","version":"1.0.0"}`)
	r.send(`{"event":"start","sequenceNumber":"1","streamSid":"MZ1","start":{"streamSid":"MZ1","callSid":"CA1","customParameters":{},"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}}`)
	g := &geminiRig{rig: r, fake: fake}
	if g.live, err = fake.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := g.live.WaitFor(ctx, func(m geminilivefake.Message) bool { return m.Kind == "realtimeInput" }); err != nil {
		t.Fatal(err) // the greeting cue, after setupComplete
	}
	return g
}

// media reads carrier messages until n bytes of agent audio have come,
// and returns the size of each media frame.
func (g *geminiRig) media(n int) []int {
	g.t.Helper()
	var sizes []int
	for got := 0; got < n; {
		m := g.readCarrier()
		if m.Event == "media" {
			b, _ := base64.StdEncoding.DecodeString(m.Media.Payload)
			sizes = append(sizes, len(b))
			got += len(b)
		}
	}
	return sizes
}

func TestGeminiRelayAudioBothWaysBargeInToolAndResume(t *testing.T) {
	tools := toolFunc(func(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
		return agentline.ToolResult{CallID: call.CallID, Output: `{"open":"until six"}`}, nil
	})
	g := newGeminiRig(t, tools)
	ctx := g.ctx
	if texts := g.live.Texts(); len(texts) != 1 || texts[0] != "Greet the caller." {
		t.Fatalf("speak-first cue %q", texts)
	}

	// Caller to model: N frames of 160 mu-law bytes are N*320 PCM bytes at 8 kHz.
	const n = 50
	for i := range n {
		g.sendFrame(i, base64.StdEncoding.EncodeToString(make([]byte, 160)))
	}
	if err := g.live.WaitAudioBytes(ctx, n*320); err != nil {
		t.Fatal(err)
	}
	for _, ch := range g.live.Chunks() {
		if ch.MimeType != "audio/pcm;rate=8000" || len(ch.PCM) != 320 {
			t.Fatalf("chunk %s of %d bytes", ch.MimeType, len(ch.PCM))
		}
	}

	// Model to caller: 3*K samples at 24 kHz are K mu-law bytes in 160-byte frames.
	g.live.SendAudio(ctx, geminilivefake.Tone(500*time.Millisecond)) // 12000 samples: 4000 bytes, 25 frames
	if sizes := g.media(4000); len(sizes) != 25 || sizes[0] != 160 || sizes[24] != 160 {
		t.Fatalf("media frames %v", sizes)
	}
	// Barge-in: the carrier is told to clear what it has not played.
	g.live.SendInterrupted(ctx)
	for m := g.readCarrier(); m.Event != "clear"; m = g.readCarrier() {
	}

	// A tool call mid-call, answered with toolResponse.
	g.live.SendToolCall(ctx, geminilivefake.FunctionCall{ID: "fc_1", Name: "hours", Args: map[string]any{"day": "monday"}})
	m, err := g.live.WaitKind(ctx, "toolResponse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Raw), `"id":"fc_1"`) || !strings.Contains(string(m.Raw), `"response":{"output":{"open":"until six"}}`) {
		t.Fatalf("toolResponse %s", m.Raw)
	}

	// goAway: the call moves to a new connection that resumes the session.
	handle, _ := g.live.IssueHandle(ctx)
	g.live.SendGoAway(ctx, 30*time.Second)
	next, err := g.fake.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := next.WaitKind(ctx, "setup"); err != nil {
		t.Fatal(err)
	}
	if next.Resumed() != handle {
		t.Fatalf("the new connection resumed %q, want %q", next.Resumed(), handle)
	}
	if !g.live.WaitDone(5 * time.Second) {
		t.Fatal("the old connection was not closed after the switch-over")
	}
	for i := range n {
		g.sendFrame(n+i, base64.StdEncoding.EncodeToString(make([]byte, 160)))
	}
	if err := next.WaitAudioBytes(ctx, n*320); err != nil {
		t.Fatal(err)
	}
	next.SendAudio(ctx, geminilivefake.Tone(100*time.Millisecond))
	g.media(800)
	next.SendOutputTranscription(ctx, "Still here.")
	next.SendTurnComplete(ctx)
	// The turn's transcript is one line, recorded at turnComplete.
	var lines []string
	for len(lines) == 0 {
		select {
		case e := <-g.events:
			if e.Type == "transcript" {
				lines = append(lines, e.Role+": "+e.Text)
			}
		case <-ctx.Done():
			t.Fatal("no transcript line")
		}
	}
	g.send(`{"event":"stop","sequenceNumber":"200","streamSid":"MZ1"}`)
	if res := g.waitResult(); res.Reason != relay.EndCallerHangup {
		t.Fatalf("result %+v", res)
	}
	for len(g.events) > 0 {
		if e := <-g.events; e.Type == "transcript" {
			lines = append(lines, e.Role+": "+e.Text)
		}
	}
	if strings.Join(lines, "|") != "agent: Still here." {
		t.Fatalf("transcript %q", lines)
	}
}

type toolFunc func(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error)

func (f toolFunc) Execute(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
	return f(ctx, call)
}
