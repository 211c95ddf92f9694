package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/g711"
)

func wsURL(base string) string {
	return "ws" + strings.TrimPrefix(base, "http") + "/v1/realtime?model=gpt-realtime"
}

// wsEvent is a server event with the fields the tests look at.
type wsEvent struct {
	Type       string `json:"type"`
	Delta      string `json:"delta"`
	Transcript string `json:"transcript"`
	Name       string `json:"name"`
	CallID     string `json:"call_id"`
	Arguments  string `json:"arguments"`
	ItemID     string `json:"item_id"`
	Error      struct {
		Code string `json:"code"`
	} `json:"error"`
}

func dialSandbox(t *testing.T, ctx context.Context, url string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + APIKey}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return conn
}

func sendJSON(t *testing.T, ctx context.Context, conn *websocket.Conn, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// until reads events until one satisfies match, and returns them all.
func until(t *testing.T, ctx context.Context, conn *websocket.Conn, match func(wsEvent) bool) []wsEvent {
	t.Helper()
	var seen []wsEvent
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read after %d events (%v): %v", len(seen), types(seen), err)
		}
		var ev wsEvent
		if err := json.Unmarshal(msg, &ev); err != nil {
			t.Fatalf("event %s: %v", msg, err)
		}
		seen = append(seen, ev)
		if match(ev) {
			return seen
		}
	}
}

func types(evs []wsEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func pcmuSession(tools ...string) map[string]any {
	var ts []map[string]any
	for _, name := range tools {
		ts = append(ts, map[string]any{"type": "function", "name": name, "parameters": json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}},"required":["order"]}`)})
	}
	return map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"audio": map[string]any{"input": map[string]any{"format": map[string]string{"type": "audio/pcmu"}},
			"output": map[string]any{"format": map[string]string{"type": "audio/pcmu"}, "voice": "marin"}},
		"tools": ts}}
}

func appendAudio(mulaw []byte) map[string]any {
	return map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(mulaw)}
}

// TestRealtimeWebSocket runs the script over the realtime WebSocket as the
// phone relay does: session, greeting with mu-law audio and transcripts,
// speech started and stopped from loud and quiet caller audio, what it
// heard, one function call of the first tool that is not a phone-only one,
// and an answer quoting the tool's output.
func TestRealtimeWebSocket(t *testing.T) {
	s, srv := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn := dialSandbox(t, ctx, wsURL(srv.URL))
	until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "session.created" })

	sendJSON(t, ctx, conn, appendAudio(make([]byte, 160)))
	if evs := until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "error" }); evs[len(evs)-1].Error.Code != "audio_before_session_update" {
		t.Fatalf("audio before session.update: %+v", evs)
	}
	sendJSON(t, ctx, conn, map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime"}})
	if evs := until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "error" || e.Type == "session.updated" }); evs[len(evs)-1].Error.Code != "unsupported_audio_format" {
		t.Fatalf("a session without audio/pcmu: %+v", evs)
	}
	sendJSON(t, ctx, conn, pcmuSession("end_call", "order_status"))
	until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "session.updated" })

	// The greeting: voice-like mu-law audio and its transcript.
	evs := until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "response.output_audio_transcript.done" })
	var audio []byte
	for _, e := range evs {
		if e.Type == "response.output_audio.delta" {
			b, err := base64.StdEncoding.DecodeString(e.Delta)
			if err != nil {
				t.Fatal(err)
			}
			audio = append(audio, b...)
		}
	}
	if len(audio) < 1000 || loudness(audio) < vadThreshold || !strings.Contains(evs[len(evs)-1].Transcript, "agentline sandbox") {
		t.Fatalf("greeting: %d bytes of audio (loudness %d), transcript %q, events %v", len(audio), loudness(audio), evs[len(evs)-1].Transcript, types(evs))
	}

	// The caller speaks (loud), then is quiet: 30 frames of 20 ms.
	loud, quiet := make([]byte, 160), make([]byte, 160)
	fillVoice(loud, 0)
	for i := range quiet {
		quiet[i] = g711.Encode(0)
	}
	for i := range 30 {
		f := quiet
		if i < 5 {
			f = loud
		}
		sendJSON(t, ctx, conn, appendAudio(f))
	}
	evs = until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "response.function_call_arguments.done" })
	var got []string
	for _, e := range evs {
		switch e.Type {
		case "input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped":
			got = append(got, e.Type)
		case "conversation.item.input_audio_transcription.completed":
			got = append(got, e.Transcript)
		}
	}
	call := evs[len(evs)-1]
	if strings.Join(got, "|") != "input_audio_buffer.speech_started|input_audio_buffer.speech_stopped|(sandbox: 30 audio packets received from your microphone)" ||
		call.Name != "order_status" || call.Arguments != `{"order":"42"}` {
		t.Fatalf("after the caller spoke: %q, call %+v", got, call)
	}

	sendJSON(t, ctx, conn, map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "function_call_output", "call_id": call.CallID, "output": `{"status":"shipped"}`}})
	sendJSON(t, ctx, conn, map[string]any{"type": "response.create"})
	evs = until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "response.output_audio_transcript.done" })
	if tr := evs[len(evs)-1].Transcript; tr != `The tool answered: {"status":"shipped"}` {
		t.Fatalf("answer = %q", tr)
	}
	select {
	case out := <-s.ToolOutputs():
		if out != `{"status":"shipped"}` {
			t.Fatalf("tool output %q", out)
		}
	default:
		t.Fatal("the tool output was not reported")
	}
	sendJSON(t, ctx, conn, map[string]any{"type": "conversation.item.truncate", "item_id": "item_x", "content_index": 0, "audio_end_ms": 120})
	if evs := until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "conversation.item.truncated" }); evs[len(evs)-1].ItemID != "item_x" {
		t.Fatalf("truncate: %+v", evs)
	}
	// The sandbox hangs up its sockets when it closes.
	s.Close()
	for i := 0; ; i++ {
		if _, _, err := conn.Read(ctx); err != nil {
			break
		}
		if i == 100 {
			t.Fatal("the socket is still open after Close")
		}
	}
}

func loudness(mulaw []byte) int {
	var sum int
	for _, b := range mulaw {
		s := int(g711.Decode(b))
		sum += max(s, -s)
	}
	return sum / max(len(mulaw), 1)
}

func TestRealtimeWebSocketRefusals(t *testing.T) {
	_, srv := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name   string
		url    string
		header http.Header
		status int
	}{
		{"no key", wsURL(srv.URL), nil, 401},
		{"wrong key", wsURL(srv.URL), http.Header{"Authorization": {"Bearer sk-real"}}, 401},
		{"no model", strings.TrimSuffix(wsURL(srv.URL), "?model=gpt-realtime"), http.Header{"Authorization": {"Bearer " + APIKey}}, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, res, err := websocket.Dial(ctx, tc.url, &websocket.DialOptions{HTTPHeader: tc.header})
			if err == nil || res == nil || res.StatusCode != tc.status {
				t.Fatalf("dial: %v, response %+v, want %d", err, res, tc.status)
			}
		})
	}
	// A plain GET is told it needs a WebSocket.
	req, _ := http.NewRequest("GET", srv.URL+"/v1/realtime?model=gpt-realtime", nil)
	req.Header.Set("Authorization", "Bearer "+APIKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 400 {
		t.Fatalf("plain GET: %v %v", res, err)
	}
	res.Body.Close()
	// The beta header gets the socket closed at once, as at OpenAI.
	conn, _, err := websocket.Dial(ctx, wsURL(srv.URL), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + APIKey}, "Openai-Beta": {"realtime=v1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if _, _, err := conn.Read(ctx); websocket.CloseStatus(err) != 4000 {
		t.Fatalf("beta header: %v", err)
	}
}

// An agent's greeting reaches the model as the phone path's first
// response.create; the sandbox says it instead of its own hello.
func TestRealtimeWebSocketSpeaksTheAgentsGreeting(t *testing.T) {
	_, srv := newSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn := dialSandbox(t, ctx, wsURL(srv.URL))
	until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "session.created" })
	sendJSON(t, ctx, conn, pcmuSession())
	sendJSON(t, ctx, conn, map[string]any{"type": "response.create", "response": map[string]any{
		"instructions": agentline.GreetingInstructions("Welcome to Acme! How can I help?")}})
	evs := until(t, ctx, conn, func(e wsEvent) bool { return e.Type == "response.output_audio_transcript.done" })
	if got := evs[len(evs)-1].Transcript; got != "Welcome to Acme! How can I help?" {
		t.Fatalf("the first words are %q, want the agent's greeting", got)
	}
}
