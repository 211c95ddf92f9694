package telephony_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// phoneEnv is an env whose realtime model is a fake on loopback, with a
// number for agent ada.
type phoneEnv struct {
	*env
	model  *realtimefake.Server
	number string
}

func newPhoneEnv(t testing.TB, settings map[string]string) *phoneEnv {
	t.Helper()
	model := realtimefake.New("sk-test")
	t.Cleanup(model.Close)
	all := map[string]string{"OPENAI_BASE_URL": model.URL()}
	for k, v := range settings {
		all[k] = v
	}
	e := newEnv(t, all)
	n := e.provision("+14155550100", e.ada)
	return &phoneEnv{env: e, model: model, number: n.PhoneNumber}
}

// call places an inbound call to ada's number through the webhook and the
// stream, with a call the fake carrier knows, and returns the carrier's side
// and the model's session.
func (e *phoneEnv) call(ctx context.Context, echoMarks bool) (*callsim.Call, *realtimefake.Session) {
	e.t.Helper()
	sid := e.fake.IncomingCall("+14155550199", e.number)
	c, err := callsim.Inbound(ctx, http.DefaultClient, e.srv.URL, "+14155550199", e.number, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, CallSID: sid, EchoMarks: echoMarks})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	ss, err := e.model.Next(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := ss.WaitType(ctx, "session.update"); err != nil {
		e.t.Fatal(err)
	}
	return c, ss
}

// record waits for the call's record to show an end reason, and returns it
// with its log.
func (e *phoneEnv) record(sid string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second) // many calls can end at once and queue for the database
	for {
		res := e.do(e.viewer, "GET", "/api/calls/"+sid, nil)
		var got map[string]any
		res.json(&got)
		if res.status == 200 && got["end_reason"] != nil && got["duration_s"] != nil {
			return got
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("call %s not ended: %d %s", sid, res.status, res.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func frame(i int) []byte {
	b := make([]byte, callsim.FrameBytes)
	for j := range b {
		b[j] = byte(i + j)
	}
	return b
}

func TestCallRelaysAudioBothWays(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)

	var update struct {
		Session struct {
			Type  string
			Audio struct {
				Input struct {
					Format        struct{ Type string }
					TurnDetection struct{ Type string } `json:"turn_detection"`
					Transcription struct{ Language string }
				}
				Output struct {
					Format struct{ Type string }
					Voice  string
				}
			}
			Tools []struct{ Name string }
		}
	}
	ev, _ := ss.WaitType(ctx, "session.update")
	json.Unmarshal(ev.Raw, &update)
	s := update.Session
	if ss.Model != "gpt-realtime" || s.Type != "realtime" || s.Audio.Input.Format.Type != "audio/pcmu" || s.Audio.Output.Format.Type != "audio/pcmu" ||
		s.Audio.Input.TurnDetection.Type != "server_vad" || s.Audio.Output.Voice != "marin" || s.Audio.Input.Transcription.Language != "en" ||
		len(s.Tools) == 0 || s.Tools[len(s.Tools)-1].Name != "end_call" || strings.Contains(string(ev.Raw), "transfer_call") {
		t.Fatalf("session.update = %s", ev.Raw)
	}

	const n = 50
	var sent []string
	for i := range n {
		p := base64.StdEncoding.EncodeToString(frame(i))
		sent = append(sent, p)
		if err := c.SendPayload(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ss.WaitAudio(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != strings.Join(sent, ",") {
		t.Fatalf("the model got other audio than the caller sent (%d appends)", len(got))
	}
	var deltas []string
	for i := range n {
		d := base64.StdEncoding.EncodeToString(frame(100 + i))
		deltas = append(deltas, d)
		ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_1", "delta": d})
	}
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Payload == deltas[n-1] }); err != nil {
		t.Fatal(err)
	}
	var media []string
	for _, m := range c.Received() {
		if m.Event == "media" {
			media = append(media, m.Payload)
		}
	}
	if strings.Join(media, ",") != strings.Join(deltas, ",") { // marks interleave; media are exactly the deltas
		t.Fatalf("the caller got other audio than the model sent")
	}
	ss.Send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_0", "transcript": "Hello, is the shop open?"})
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_1", "transcript": "Yes, until six."})
	// The relay reads the model's events in order: once a later delta has
	// reached the caller, the transcripts have been taken.
	marker := base64.StdEncoding.EncodeToString(frame(200))
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_1", "delta": marker})
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Payload == marker }); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c, ss)
	rec := e.record(c.CallSID)
	if rec["end_reason"] != "caller_hangup" || rec["status"] != "completed" || rec["started_at"] == nil {
		t.Fatalf("record = %v", rec)
	}
	events, _ := rec["events"].([]any)
	line := func(i int) string {
		m, _ := events[i].(map[string]any)
		return fmt.Sprint(m["type"], "/", m["role"], "/", m["text"])
	}
	if len(events) != 2 || line(0) != "transcript/caller/Hello, is the shop open?" || line(1) != "transcript/agent/Yes, until six." {
		t.Fatalf("events = %v", events)
	}
}

// waitClosed checks that both sides of a call are closed within a second.
func waitClosed(t *testing.T, c *callsim.Call, ss *realtimefake.Session) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("the carrier's stream is still open a second after the end")
	}
	if !ss.WaitDone(time.Second) {
		t.Fatal("the model's socket is still open a second after the end")
	}
}

func TestStreamWithoutValidTokenIsRefused(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	sid := "CA" + strings.Repeat("c", 32)
	doc := e.postForm("/api/telephony/inbound", map[string][]string{"CallSid": {sid}, "From": {"+14155550199"}, "To": {e.number}}, e.fake.AuthToken())
	good, err := callsim.ParseTwiML(string(doc.body))
	if err != nil {
		t.Fatal(err)
	}
	with := func(k, v string) callsim.Stream {
		s := callsim.Stream{URL: good.URL, Params: map[string]string{}}
		for a, b := range good.Params {
			s.Params[a] = b
		}
		s.Params[k] = v
		return s
	}
	bobURL := carrier.StreamURL(botHost, e.bob)
	expired := streamtoken.Sign(e.app.Secret, e.ada, sid, "inbound", time.Now().Add(-time.Second))
	for _, c := range []struct {
		name    string
		stream  callsim.Stream
		callSID string
	}{
		{"no token", with("stream_token", ""), sid},
		{"forged token", with("stream_token", streamtoken.Sign("not-the-secret", e.ada, sid, "inbound", time.Now().Add(time.Minute))), sid},
		{"expired token", with("stream_token", expired), sid},
		{"token of another call", good, "CA" + strings.Repeat("d", 32)},
		{"token of another agent", callsim.Stream{URL: bobURL, Params: good.Params}, sid},
	} {
		call, err := callsim.Open(ctx, c.stream, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, Server: e.srv.URL, CallSID: c.callSID})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		select {
		case <-call.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: stream still open", c.name)
		}
		if call.CloseStatus() != websocket.StatusPolicyViolation {
			t.Errorf("%s: close status %v", c.name, call.CloseStatus())
		}
	}
	if n := e.model.Count(); n != 0 {
		t.Fatalf("%d model sockets were opened for refused streams", n)
	}
	// Without upgrade headers the route answers a JSON 4xx.
	if res := e.do("", "GET", fmt.Sprintf("/api/telephony/stream/%d", e.ada), nil); res.status != 400 || res.errorCode() != "invalid_request" {
		t.Fatalf("plain GET: %d %s", res.status, res.body)
	}
	// And the good token works.
	call, err := callsim.Open(ctx, good, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, Server: e.srv.URL, CallSID: sid})
	if err != nil {
		t.Fatal(err)
	}
	defer call.Close()
	if _, err := e.model.Next(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestBargeIn(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	c, ss := e.call(ctx, false)
	// 1 s of agent audio in 20 ms deltas: marks every 200 ms (1600 bytes).
	for i := range 50 {
		ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_7", "delta": base64.StdEncoding.EncodeToString(frame(i))})
	}
	var marks []string
	for len(marks) < 2 {
		i, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "mark" && !contains(marks, m.Mark) })
		if err != nil {
			t.Fatal(err)
		}
		marks = append(marks, c.Received()[i].Mark)
	}
	// The caller has heard the first two marks' worth: 400 ms.
	for _, m := range marks {
		c.EchoMark(ctx, m)
	}
	// The relay reads the carrier's messages in order: once a later keypad
	// digit has reached the model, the echoes have been taken.
	c.SendDTMF(ctx, "5")
	if _, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool { return strings.Contains(string(ev.Raw), "pressed 5") }); err != nil {
		t.Fatal(err)
	}
	ss.Send(ctx, map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": 1000, "item_id": "item_8"})
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "clear" }); err != nil {
		t.Fatal(err)
	}
	ev, err := ss.WaitType(ctx, "conversation.item.truncate")
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		ItemID       string `json:"item_id"`
		ContentIndex int    `json:"content_index"`
		AudioEndMs   int    `json:"audio_end_ms"`
	}
	json.Unmarshal(ev.Raw, &tr)
	if tr.ItemID != "item_7" || tr.ContentIndex != 0 || tr.AudioEndMs != 400 {
		t.Fatalf("truncate = %s", ev.Raw)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestDTMFReachesModel(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	if err := c.SendDTMF(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	ev, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool {
		return ev.Type == "conversation.item.create" && strings.Contains(string(ev.Raw), "pressed 1")
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ev.Raw), `"role":"user"`) {
		t.Fatalf("item = %s", ev.Raw)
	}
	c.Stop(ctx)
	rec := e.record(c.CallSID)
	if !strings.Contains(fmt.Sprint(rec["events"]), "type:dtmf") {
		t.Fatalf("events = %v", rec["events"])
	}
}

func TestOutboundCallAgentSpeaksFirst(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	res := e.do(e.editor, "POST", fmt.Sprintf("/api/agents/%d/telephony/outbound", e.ada), map[string]any{"to_number": "+14155550123"})
	if res.status != 201 {
		t.Fatalf("outbound: %d %s", res.status, res.body)
	}
	placed := e.fake.Calls()[0]
	e.fake.SetCallStatus(placed.SID, "in-progress")
	s, err := callsim.ParseTwiML(placed.Twiml)
	if err != nil {
		t.Fatal(err)
	}
	c, err := callsim.Open(ctx, s, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, Server: e.srv.URL, CallSID: placed.SID, EchoMarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SendMedia(ctx, frame(1)) // caller audio sent at once must still come after the greeting
	ss, err := e.model.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitAudio(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, ev := range ss.Events() {
		order = append(order, ev.Type)
	}
	if strings.Join(order, " ") != "session.update response.create input_audio_buffer.append" {
		t.Fatalf("events = %v", order)
	}
	// A token of an outbound call does not admit a second stream.
	again, err := callsim.Open(ctx, s, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, Server: e.srv.URL, CallSID: placed.SID})
	if err != nil {
		t.Fatal(err)
	}
	<-again.Done()
	if again.CloseStatus() != websocket.StatusPolicyViolation {
		t.Fatalf("second stream: %v", again.CloseStatus())
	}
}

func TestEndings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		settings map[string]string
		end      func(e *phoneEnv, c *callsim.Call, ss *realtimefake.Session)
		reason   string
		apology  bool
	}{
		{"caller stop", nil, func(e *phoneEnv, c *callsim.Call, ss *realtimefake.Session) { c.Stop(context.Background()) }, "caller_hangup", false},
		{"carrier drop", nil, func(e *phoneEnv, c *callsim.Call, ss *realtimefake.Session) { c.Close() }, "carrier_disconnected", false},
		{"model drop", nil, func(e *phoneEnv, c *callsim.Call, ss *realtimefake.Session) { ss.Drop() }, "model_disconnected", true},
		{"end-call API", nil, func(e *phoneEnv, c *callsim.Call, ss *realtimefake.Session) {
			if res := e.do(e.owner, "DELETE", fmt.Sprintf("/api/agents/%d/telephony/calls/%s", e.ada, c.CallSID), nil); res.status != 204 {
				e.t.Errorf("hang up: %d %s", res.status, res.body)
			}
		}, "api_hangup", false},
		{"max duration", map[string]string{"AGENTLINE_MAX_CALL_DURATION": "300ms"}, func(e *phoneEnv, c *callsim.Call, ss *realtimefake.Session) {}, "max_duration", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newPhoneEnv(t, tc.settings)
			ctx := testCtx(t)
			c, ss := e.call(ctx, true)
			c.SendMedia(ctx, frame(0))
			ss.WaitAudio(ctx, 1)
			tc.end(e, c, ss)
			waitClosed(t, c, ss)
			rec := e.record(c.CallSID)
			if rec["end_reason"] != tc.reason {
				t.Fatalf("end reason %v, want %s", rec["end_reason"], tc.reason)
			}
			var apologized bool
			for _, call := range e.fake.Calls() {
				apologized = apologized || call.SID == c.CallSID && strings.Contains(call.Twiml, "technical trouble")
			}
			if apologized != tc.apology {
				t.Fatalf("apology played: %v, want %v", apologized, tc.apology)
			}
		})
	}
}

// lastWordsThenTool plays one response of the model: the item's audio
// (one frame, f), and while it plays a call of the tool (no arguments) that
// ends the call or hands it on once those words have played.
func lastWordsThenTool(ctx context.Context, ss *realtimefake.Session, item string, f []byte, callID, tool string) {
	ss.Send(ctx, map[string]any{"type": "response.created"})
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": item, "delta": base64.StdEncoding.EncodeToString(f)})
	ss.Send(ctx, map[string]any{"type": "response.function_call_arguments.done", "call_id": callID, "name": tool, "arguments": "{}"})
	ss.Send(ctx, map[string]any{"type": "response.output_audio.done", "item_id": item})
	ss.Send(ctx, map[string]any{"type": "response.done"})
}

func TestEndCallTool(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	lastWordsThenTool(ctx, ss, "item_9", frame(3), "call_1", "end_call")
	waitClosed(t, c, ss)
	if len(c.Audio()) != callsim.FrameBytes {
		t.Fatalf("the last words did not reach the caller before the hang-up")
	}
	rec := e.record(c.CallSID)
	if rec["end_reason"] != "agent_hangup" || !strings.Contains(fmt.Sprint(rec["events"]), "end_call") {
		t.Fatalf("record = %v", rec)
	}
}

func TestVoiceMapping(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	for voice, want := range map[string]string{"": "marin", "cedar": "cedar", "Nova": "coral", "Puck": "verse", "nonesuch": "marin"} {
		a, err := e.app.Store.Agent(ctx, e.project, e.ada)
		if err != nil {
			t.Fatal(err)
		}
		a.Voice = voice
		if _, err := e.app.Store.UpdateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		c, ss := e.call(ctx, true)
		ev, _ := ss.WaitType(ctx, "session.update")
		var u struct {
			Session struct {
				Audio struct{ Output struct{ Voice string } }
			}
		}
		json.Unmarshal(ev.Raw, &u)
		if u.Session.Audio.Output.Voice != want {
			t.Errorf("voice %q -> %q, want %q", voice, u.Session.Audio.Output.Voice, want)
		}
		c.Stop(ctx)
		<-c.Done()
	}
}

// goroutinesSettle waits briefly for the goroutine count to settle back to
// at most want, and returns it.
func goroutinesSettle(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 200 && n > want; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

func TestStreamUpgradeSignatureInProduction(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, map[string]string{"AGENTLINE_ENV": "production"})
	ctx := testCtx(t)
	sid := e.fake.IncomingCall("+14155550199", e.number)
	form := url.Values{"CallSid": {sid}, "From": {"+14155550199"}, "To": {e.number}}
	doc := e.postForm("/api/telephony/inbound", form, e.fake.AuthToken())
	s, err := callsim.ParseTwiML(string(doc.body))
	if err != nil {
		t.Fatalf("%v: %s", err, doc.body)
	}
	public := s.URL // wss://{BOT_HOST}/api/telephony/stream/{agent_id}
	for _, c := range []struct {
		name, sig string
	}{
		{"no signature", ""},
		{"wrong token", twiliofake.Sign("0123456789abcdef0123456789abcdef", public, url.Values{})},
		{"wrong URL", twiliofake.Sign(e.fake.AuthToken(), strings.Replace(public, "wss://", "https://", 1), url.Values{})},
	} {
		_, err := callsim.Open(ctx, s, callsim.Options{Server: e.srv.URL, CallSID: sid, Header: http.Header{"X-Twilio-Signature": {c.sig}}})
		if err == nil || !strings.Contains(err.Error(), "403") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if n := e.model.Count(); n != 0 {
		t.Fatalf("%d model sockets opened", n)
	}
	c, err := callsim.Open(ctx, s, callsim.Options{Server: e.srv.URL, CallSID: sid, EchoMarks: true,
		Header: http.Header{"X-Twilio-Signature": {twiliofake.Sign(e.fake.AuthToken(), public, url.Values{})}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := e.model.Next(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestPhoneMetrics(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	c.SendMedia(ctx, frame(0))
	ss.WaitAudio(ctx, 1)
	c.SendMedia(ctx, frame(1))
	ss.WaitAudio(ctx, 2)
	metric := func(name string) float64 {
		// Metrics have their own listener; read them from its handler.
		rec := httptest.NewRecorder()
		e.app.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			if v, ok := strings.CutPrefix(l, name+" "); ok {
				var f float64
				fmt.Sscan(v, &f)
				return f
			}
		}
		t.Fatalf("no %s in the metrics", name)
		return 0
	}
	// The first frame may have been held until the session was ready: not
	// counted as relay latency. The second's latency is observed once its
	// write to the model has returned, which can be just after the model
	// has it: on a loaded machine the count is waited for.
	for deadline := time.Now().Add(10 * time.Second); metric("agentline_phone_frame_latency_seconds_count") < 1 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if active, frames := metric("agentline_phone_active_calls"), metric("agentline_phone_frame_latency_seconds_count"); active != 1 || frames < 1 {
		t.Fatalf("metrics during the call: %v active calls, %v frame latencies; want 1, at least 1", active, frames)
	}
	c.Stop(ctx)
	e.record(c.CallSID)
	if metric("agentline_phone_active_calls") != 0 || metric("agentline_phone_call_duration_seconds_count") != 1 {
		t.Fatal("metrics after the call")
	}
}

// BenchmarkCallSetup measures one whole short inbound call through the HTTP
// stack on SQLite: the webhook, the stream's upgrade and start, the token
// and record checks, the model socket and session.update, one frame each
// way, the hang-up and the end's record.
func BenchmarkCallSetup(b *testing.B) {
	e := newPhoneEnv(b, nil)
	ctx := context.Background()
	delta := base64.StdEncoding.EncodeToString(frame(9))
	for b.Loop() {
		c, ss := e.call(ctx, true)
		c.SendMedia(ctx, frame(1))
		if _, err := ss.WaitAudio(ctx, 1); err != nil {
			b.Fatal(err)
		}
		ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_1", "delta": delta})
		if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Payload == delta }); err != nil {
			b.Fatal(err)
		}
		c.Stop(ctx)
		<-c.Done()
		ss.WaitDone(time.Second)
	}
}

func TestInboundGreetingSpeaksFirst(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	if res := e.do(e.owner, "PATCH", fmt.Sprintf("/api/agents/%d", e.ada), map[string]any{"greeting": "Thanks for calling Ada's shop!"}); res.status != 200 {
		t.Fatalf("greeting: %d %s", res.status, res.body)
	}
	c, ss := e.call(ctx, true)
	c.SendMedia(ctx, frame(1))
	if _, err := ss.WaitAudio(ctx, 1); err != nil {
		t.Fatal(err)
	}
	events := ss.Events()
	if len(events) < 3 || events[1].Type != "response.create" || !strings.Contains(string(events[1].Raw), "Thanks for calling Ada's shop!") {
		t.Fatalf("events = %v", events)
	}
}

// TestModelRefusesSocket: when the model's socket cannot be opened, the
// caller hears an apology instead of silence, and the record says why.
func TestModelRefusesSocket(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, map[string]string{"OPENAI_API_KEY": "sk-wrong"})
	ctx := testCtx(t)
	sid := e.fake.IncomingCall("+14155550199", e.number)
	c, err := callsim.Inbound(ctx, http.DefaultClient, e.srv.URL, "+14155550199", e.number, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, CallSID: sid})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the stream stays open without a model")
	}
	// The carrier is told why with a close frame, not a dropped socket (1006).
	if code, reason := c.CloseStatus(), c.CloseReason(); code != websocket.StatusInternalError || reason != "model_disconnected" {
		t.Errorf("carrier socket closed with %v %q, want 1011 model_disconnected", code, reason)
	}
	rec := e.record(sid)
	if rec["end_reason"] != "model_disconnected" {
		t.Fatalf("record = %v", rec)
	}
	var twiml string
	for _, call := range e.fake.Calls() {
		if call.SID == sid {
			twiml = call.Twiml
		}
	}
	if !strings.Contains(twiml, "<Say>Sorry, we are having technical trouble") || !strings.HasSuffix(twiml, "<Hangup/></Response>") {
		t.Fatalf("carrier TwiML = %q", twiml)
	}
}
