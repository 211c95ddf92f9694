package app_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// testCallStarted is the answer of POST /api/agents/{agent_id}/test-calls.
type testCallStarted struct {
	CallSID        string    `json:"call_sid"`
	ConversationID string    `json:"conversation_id"`
	StreamURL      string    `json:"stream_url"`
	Token          string    `json:"token"`
	ExpiresAt      time.Time `json:"expires_at"`
}

// openTestCall opens a test call's stream as the console's browser does:
// no carrier signature, the token in the URL and in the start message.
func openTestCall(ctx context.Context, s *apptest.Server, tc testCallStarted) (*callsim.Call, error) {
	return callsim.Open(ctx, callsim.Stream{URL: "ws://bot.example.test" + tc.StreamURL, Params: map[string]string{"stream_token": tc.Token, "direction": agentline.CallTest}},
		callsim.Options{Server: s.URL, CallSID: tc.CallSID, EchoMarks: true})
}

// A test call from the browser, on SQLite and PostgreSQL: who may start
// one, the call through the real stream handler and relay with no carrier
// signature, its record as a phone conversation of direction test, and
// the tokens that do not open a stream: a replay, a carrier's token
// without a signature.
func TestTestCall(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) { testTestCall(t, d) })
	}
}

func testTestCall(t *testing.T, d store.Dialect) {
	model := realtimefake.New("sk-test")
	defer model.Close()
	s := apptest.StartFresh(t, d, map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": model.URL(),
		"TWILIO_AUTH_TOKEN": carrierToken,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	owner, tok := s.NewUser(t, "owner@example.com")
	viewer, viewerTok := s.NewUser(t, "viewer@example.com")
	_, outsiderTok := s.NewUser(t, "outsider@example.com")
	var p agentline.Project
	var ada, gem agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "greeting": "Hello, this is Ada."}, &ada)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Gem", "model": "gemini-2.5-flash-native-audio"}, &gem)
	if _, _, err := s.App.Store.SetMember(ctx, p.ID, viewer.Email, agentline.RoleViewer); err != nil {
		t.Fatal(err)
	}
	path := "/api/agents/" + itoa(ada.ID) + "/test-calls"
	for _, c := range []struct {
		name, token, path string
		status            int
		code              string
	}{
		{"signed out", "", path, 401, "unauthorized"},
		{"a viewer", viewerTok, path, 403, "forbidden"},
		{"an outsider", outsiderTok, path, 404, "not_found"},
		{"a Gemini agent without GEMINI_API_KEY", tok, "/api/agents/" + itoa(gem.ID) + "/test-calls", 503, "not_configured"},
	} {
		if res := s.Do(t, "POST", c.path, c.token, nil); res.Status != c.status || res.ErrorCode() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.Status, res, c.status, c.code)
		}
	}

	var tc testCallStarted
	s.Must(t, 201, "POST", path, tok, nil, &tc)
	claims, err := streamtoken.Verify(s.App.Secret, tc.Token, ada.ID, time.Now())
	if err != nil || claims.Direction != agentline.CallTest || claims.Ref != tc.CallSID || claims.UserID != owner.ID {
		t.Fatalf("token claims %+v, %v", claims, err)
	}
	if ttl := time.Until(tc.ExpiresAt); ttl <= 0 || ttl > streamtoken.TestTTL {
		t.Errorf("expires_at %v is not within the test TTL", tc.ExpiresAt)
	}
	call, err := openTestCall(ctx, s, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer call.Close()
	ss, err := model.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, callsim.FrameBytes)
	for i := range frame {
		frame[i] = byte(i)
	}
	for range 5 {
		if err := call.SendMedia(ctx, frame); err != nil {
			t.Fatal(err)
		}
	}
	audio, err := ss.WaitAudio(ctx, 5)
	if err != nil || audio[0] != base64.StdEncoding.EncodeToString(frame) {
		t.Fatalf("the model got %v, %v", audio, err)
	}
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "response_id": "r1", "item_id": "item_1", "output_index": 0, "content_index": 0,
		"delta": base64.StdEncoding.EncodeToString(frame)})
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_1", "transcript": "Hello, this is Ada."})
	if _, err := call.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "media" }); err != nil {
		t.Fatalf("no agent audio: %v", err)
	}

	// While it runs: the same token again is a replay.
	replay, err := openTestCall(ctx, s, tc)
	if err != nil {
		t.Fatal(err)
	}
	<-replay.Done()
	if st := replay.CloseStatus(); st != websocket.StatusPolicyViolation {
		t.Errorf("a replayed test call token: close status %v, want 1008", st)
	}

	call.Stop(ctx)
	<-call.Done()
	var conv agentline.Conversation
	waitFor(t, func() bool {
		s.Must(t, 200, "GET", "/api/conversations/"+tc.ConversationID, tok, nil, &conv)
		return conv.Status == agentline.ConversationEnded
	})
	if conv.Kind != agentline.ConversationPhone || conv.Direction != agentline.CallTest || conv.From != "owner@example.com" ||
		conv.EndReason != "caller_hangup" || len(conv.Transcript) == 0 || conv.Transcript[0].Text != "Hello, this is Ada." {
		t.Errorf("conversation %+v", conv)
	}

	// The carrier's path still needs its signature: an unsigned upgrade
	// with no test token, or with a carrier's token as one, is refused
	// before the upgrade.
	inbound := streamtoken.Sign(s.App.Secret, ada.ID, "CA00000000000000000000000000000077", agentline.CallInbound, time.Now().Add(time.Minute))
	for name, u := range map[string]string{
		"no signature":                  "/api/telephony/stream/" + itoa(ada.ID),
		"a carrier's token as test":     "/api/telephony/stream/" + itoa(ada.ID) + "?test_token=" + inbound,
		"a test token of another agent": "/api/telephony/stream/" + itoa(gem.ID) + "?test_token=" + tc.Token,
	} {
		_, err := callsim.Open(ctx, callsim.Stream{URL: "ws://bot.example.test" + u, Params: map[string]string{"stream_token": inbound}}, callsim.Options{Server: s.URL})
		if err == nil || !strings.Contains(err.Error(), "403") {
			t.Errorf("%s: %v, want 403 on the upgrade", name, err)
		}
	}
}

// waitFor polls cond (bounded) until it holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 800 {
		if cond() {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("the condition never held")
}

// With the sandbox provider (no API key), a test call from the browser
// reaches the sandbox's realtime WebSocket through the same relay: its
// scripted voice comes back as mu-law and its lines are kept.
func TestTestCallOnTheSandbox(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "greeting": "Hello, this is Ada."}, &a)
	var tc testCallStarted
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/test-calls", tok, nil, &tc)
	call, err := openTestCall(ctx, s, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer call.Close()
	if _, err := call.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "media" }); err != nil {
		t.Fatalf("no voice from the sandbox: %v", err)
	}
	loud := tone(time.Second)
	for i := 0; i < len(loud); i += callsim.FrameBytes {
		call.SendMedia(ctx, loud[i:i+callsim.FrameBytes])
	}
	// The lines are stored while the call runs.
	var conv agentline.Conversation
	waitFor(t, func() bool {
		s.Must(t, 200, "GET", "/api/conversations/"+tc.ConversationID, tok, nil, &conv)
		return len(conv.Transcript) >= 2
	})
	call.Stop(ctx)
	<-call.Done()
	waitFor(t, func() bool {
		s.Must(t, 200, "GET", "/api/conversations/"+tc.ConversationID, tok, nil, &conv)
		return conv.Status == agentline.ConversationEnded
	})
	if len(call.Audio()) == 0 || len(conv.Transcript) == 0 || conv.Direction != agentline.CallTest {
		t.Fatalf("%d bytes of the sandbox's voice; conversation %+v", len(call.Audio()), conv)
	}
	t.Logf("%d bytes of the sandbox's voice; transcript %+v", len(call.Audio()), conv.Transcript)
}
