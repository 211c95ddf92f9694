package telephony_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// geminiPhone is a phone env with a Gemini-kind agent (recording its
// calls, with a webhook tool) on a number, and the Live API fake.
type geminiPhone struct {
	*env
	live   *geminilivefake.Server
	agent  int64
	number string
}

func newGeminiPhone(t *testing.T) *geminiPhone {
	t.Helper()
	live := geminilivefake.New("g-test")
	t.Cleanup(live.Close)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"open":"until six"}`)
	}))
	t.Cleanup(hook.Close)
	e := newEnv(t, map[string]string{"GEMINI_API_KEY": "g-test", "GEMINI_BASE_URL": live.URL(),
		"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true", "AGENTLINE_RECORDINGS_DIR": t.TempDir()})
	a := agentline.Agent{ProjectID: e.project, Name: "Gemma", Model: "gemini-2.5-flash-native-audio-preview-09-2025",
		Voice: "Kore", Language: "en-US", Instructions: "You answer for the Corner Shop.", RecordCalls: true,
		Analysis: agentline.AnalysisSettings{Summary: true}}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := e.app.Store.CreateAgent(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	res := e.do(e.owner, "POST", fmt.Sprintf("/api/agents/%d/tools", a.ID), map[string]any{
		"name": "opening_hours", "description": "Tells the opening hours.", "url": hook.URL,
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"day": map[string]any{"type": "string"}}},
	})
	if res.status != 201 {
		t.Fatalf("create tool: %d %s", res.status, res.body)
	}
	n := e.provision("+14155550100", a.ID)
	return &geminiPhone{env: e, live: live, agent: a.ID, number: n.PhoneNumber}
}

// geminiMedia waits until the caller has received n bytes of agent audio
// in the messages after the first skip, and returns the sizes of those
// media frames and the index after the last one.
func geminiMedia(ctx context.Context, t *testing.T, c *callsim.Call, skip, n int) ([]int, int) {
	t.Helper()
	var sizes []int
	got, i := 0, 0
	last, err := c.WaitFor(ctx, func(m callsim.Message) bool {
		i++
		if i <= skip || m.Event != "media" {
			return false
		}
		b, _ := base64.StdEncoding.DecodeString(m.Payload)
		sizes = append(sizes, len(b))
		got += len(b)
		return got >= n
	})
	if err != nil {
		t.Fatalf("agent audio: %d of %d bytes: %v", got, n, err)
	}
	return sizes, last + 1
}

// A Gemini-kind agent takes an inbound call through the stream handler and
// the relay: the setup carries its instructions, voice and tools; caller
// frames reach the Live API as 8 kHz PCM and its 24 kHz audio reaches the
// caller as 160-byte mu-law frames; interrupted clears the carrier; a tool
// call is answered with toolResponse; goAway moves the call to a resumed
// connection; the record has the transcript and the recording.
func TestGeminiInboundCallThroughTheStreamHandler(t *testing.T) {
	t.Parallel()
	e := newGeminiPhone(t)
	ctx := testCtx(t)
	sid := e.fake.IncomingCall("+14155550199", e.number)
	c, err := callsim.Inbound(ctx, http.DefaultClient, e.srv.URL, "+14155550199", e.number, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, CallSID: sid})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ss, err := e.live.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitKind(ctx, "setup"); err != nil {
		t.Fatal(err)
	}
	setup, raw := ss.Setup()
	tools := setup.ToolNames()
	if setup.Model != "models/gemini-2.5-flash-native-audio-preview-09-2025" || setup.Voice() != "Kore" ||
		!strings.HasPrefix(setup.Instructions(), "You answer for the Corner Shop.") || !slices.Contains(tools, "opening_hours") ||
		!slices.Contains(tools, "end_call") || setup.SessionResumption == nil || setup.ContextWindowCompression == nil ||
		setup.InputAudioTranscription == nil || setup.OutputAudioTranscription == nil || !strings.Contains(string(raw), `"responseModalities":["AUDIO"]`) {
		t.Fatalf("setup %s", raw)
	}

	const n = 50 // caller frames: N*160 mu-law bytes are N*320 PCM bytes
	for i := range n {
		if err := c.SendMedia(ctx, frame(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.WaitAudioBytes(ctx, n*320); err != nil {
		t.Fatal(err)
	}
	if ss.MediaChunks() != 0 || ss.Chunks()[0].MimeType != "audio/pcm;rate=8000" {
		t.Fatalf("audio sent as %d mediaChunks, %q", ss.MediaChunks(), ss.Chunks()[0].MimeType)
	}
	ss.SendInputTranscription(ctx, "Are you open ")
	ss.SendInputTranscription(ctx, "on Monday?")
	ss.SendAudio(ctx, geminilivefake.Tone(time.Second)) // 24000 samples: 8000 mu-law bytes
	sizes, seen := geminiMedia(ctx, t, c, 0, 8000)
	if len(sizes) != 50 || slices.ContainsFunc(sizes, func(s int) bool { return s != 160 }) {
		t.Fatalf("media frames %v", sizes)
	}
	ss.SendInterrupted(ctx)
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "clear" }); err != nil {
		t.Fatal(err)
	}

	ss.SendToolCall(ctx, geminilivefake.FunctionCall{ID: "fc_1", Name: "opening_hours", Args: map[string]any{"day": "monday"}})
	m, err := ss.WaitKind(ctx, "toolResponse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Raw), `"id":"fc_1"`) || !strings.Contains(string(m.Raw), `"output":{"open":"until six"}`) {
		t.Fatalf("toolResponse %s", m.Raw)
	}

	handle, _ := ss.IssueHandle(ctx)
	ss.SendGoAway(ctx, 20*time.Second)
	next, err := e.live.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := next.WaitKind(ctx, "setup"); err != nil || next.Resumed() != handle {
		t.Fatalf("the new connection resumed %q, want %q (%v)", next.Resumed(), handle, err)
	}
	for i := range n {
		c.SendMedia(ctx, frame(n+i))
	}
	if err := next.WaitAudioBytes(ctx, 20*320); err != nil { // frames held during the switch may have gone either way
		t.Fatal(err)
	}
	next.SendOutputTranscription(ctx, "Yes, until six.")
	next.SendAudio(ctx, geminilivefake.Tone(200*time.Millisecond))
	geminiMedia(ctx, t, c, seen, 1600)
	next.SendTurnComplete(ctx)
	time.Sleep(50 * time.Millisecond) // the call log writer takes the lines
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	rec := (&phoneEnv{env: e.env}).record(c.CallSID)
	if rec["end_reason"] != "caller_hangup" || rec["status"] != "completed" {
		t.Fatalf("record = %v", rec)
	}
	var lines []string
	events, _ := rec["events"].([]any)
	for _, ev := range events {
		m, _ := ev.(map[string]any)
		lines = append(lines, fmt.Sprint(m["type"], "/", m["role"], "/", m["text"]))
	}
	got := strings.Join(lines, "|")
	if !strings.Contains(got, "transcript/caller/Are you open on Monday?") || !strings.Contains(got, "transcript/agent/Yes, until six.") || !strings.Contains(got, "tool_call") {
		t.Fatalf("events = %s", got)
	}
	e.waitRecording(c.CallSID)
	e.waitAnalysis(c.CallSID)
}

// waitAnalysis checks that the call's end asked for its analysis (a
// pending analysis and its job, in the end's transaction). This env runs
// no job queue; the analysis itself is the same job as for any
// conversation (internal/analysis's tests run it on Gemini's generateContent).
func (e *geminiPhone) waitAnalysis(sid string) {
	e.t.Helper()
	ctx := context.Background()
	call, err := e.app.Store.Call(ctx, e.project, sid)
	if err != nil {
		e.t.Fatal(err)
	}
	conv, err := e.app.Store.Conversation(ctx, e.project, agentline.CallConversationID(call.ID))
	if err != nil || conv.Analysis == nil || conv.Analysis.Status != agentline.AnalysisPending || len(conv.Transcript) < 2 {
		e.t.Fatalf("analysis of the call: %+v, transcript %+v (err %v)", conv.Analysis, conv.Transcript, err)
	}
}

// waitRecording waits for the call's recording and checks it holds audio.
func (e *geminiPhone) waitRecording(sid string) {
	e.t.Helper()
	call, err := e.app.Store.Call(context.Background(), e.project, sid)
	if err != nil {
		e.t.Fatal(err)
	}
	id := agentline.CallConversationID(call.ID)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := e.do(e.viewer, "GET", "/api/conversations/"+id+"/recording", nil)
		if res.status == 200 && len(res.body) > 44+8000 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("recording of %s: %d, %d bytes", id, res.status, len(res.body))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
