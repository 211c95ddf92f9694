package telephony_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/g711"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// TestSandboxPhoneCall: `serve --sandbox` with no carrier account and no API
// key takes a whole phone call: a number bought from the sandbox's pretend
// carrier, the inbound webhook, the media stream relayed to the sandbox's
// realtime WebSocket, the agent's voice back as mu-law, its scripted
// function call through the agent's webhook tool, and the transcript on the
// call's record.
func TestSandboxPhoneCall(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sc := startSandboxCall(ctx, t, map[string]string{"name": "Ada"})
	c := sc.c
	// The caller speaks for a second (a 300 Hz tone) while the agent greets.
	tone := make([]byte, 8000)
	for i := range tone {
		tone[i] = g711.Encode(int16(8000 * math.Sin(2*math.Pi*300*float64(i)/8000)))
	}
	if err := c.Play(ctx, tone, true); err != nil {
		t.Fatal(err)
	}

	// The record fills as the call goes on: the greeting, what the sandbox
	// heard, the tool call with the webhook's answer, and the answer.
	sc.waitEvents(ctx, t, "in-progress", "agentline sandbox", "audio packets received", "lookup_order", "The tool answered: {\"status\":\"shipped on March 3\"}")
	sc.checkToolAndVoice(t)
	c.Stop(ctx)
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the stream stayed open after stop")
	}
	for {
		res := sc.s.Do(t, "GET", "/api/calls/"+c.CallSID, sc.tok, nil)
		var rec map[string]any
		res.JSON(t, &rec)
		if rec["end_reason"] == "caller_hangup" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("record after stop: %s", res.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSandboxGeminiPhoneCall: with --sandbox and no GEMINI_API_KEY, a
// Gemini-kind agent's call goes to the sandbox's Gemini side (the Live
// socket): its greeting in 24 kHz PCM reaches the caller as mu-law, the
// caller's speech ends a turn, and the scripted toolCall runs the agent's
// webhook tool and is answered with toolResponse.
func TestSandboxGeminiPhoneCall(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sc := startSandboxCall(ctx, t, map[string]string{"name": "Gem",
		"model": "gemini-2.5-flash-native-audio-preview-09-2025", "greeting": "Hello, this is Gem."})
	// The caller speaks for a second (a 300 Hz tone), then is quiet.
	tone := make([]byte, 8000+6000)
	for i := range tone {
		tone[i] = 0xff // mu-law silence
		if i < 8000 {
			tone[i] = g711.Encode(int16(8000 * math.Sin(2*math.Pi*300*float64(i)/8000)))
		}
	}
	if err := sc.c.Play(ctx, tone, true); err != nil {
		t.Fatal(err)
	}
	sc.waitEvents(ctx, t, "", "agentline sandbox", "lookup_order", `The tool lookup_order answered: {"output":{"status":"shipped on March 3"}}`)
	sc.checkToolAndVoice(t)
	sc.c.Stop(ctx)
}

// sandboxCall is a call, as the carrier places it, to a number bought
// for an agent on `serve --sandbox` with no carrier account and no API
// key; the agent has a webhook tool, lookup_order, answering
// {"status":"shipped on March 3"}.
type sandboxCall struct {
	s      *apptest.Server
	tok    string
	c      *callsim.Call
	hooked chan string // the bodies the webhook received
}

// startSandboxCall starts the instance, makes the agent (its fields as
// given) with its tool and number, and places the call.
func startSandboxCall(ctx context.Context, t *testing.T, agent map[string]string) *sandboxCall {
	t.Helper()
	sc := &sandboxCall{hooked: make(chan string, 4)}
	webhook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sc.hooked <- string(b)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"shipped on March 3"}`)
	}))
	t.Cleanup(webhook.Close)
	sc.s = apptest.StartFresh(t, store.SQLite, map[string]string{
		"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": botHost, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
	})
	s := sc.s
	_, sc.tok = s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", sc.tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", fmt.Sprintf("/api/projects/%d/agents", p.ID), sc.tok, agent, &a)
	s.Must(t, 201, "POST", fmt.Sprintf("/api/agents/%d/tools", a.ID), sc.tok, map[string]any{"name": "lookup_order", "description": "Find an order",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []string{"id"}}, "url": webhook.URL}, nil)
	var n agentline.PhoneNumber
	s.Must(t, 201, "POST", fmt.Sprintf("/api/projects/%d/telephony/numbers", p.ID), sc.tok, map[string]any{"phone_number": "+14155550100", "agent_id": a.ID}, &n)
	c, err := callsim.Inbound(ctx, s.Client, s.URL, "+14155550199", n.PhoneNumber, callsim.Options{AuthToken: twiliofake.SandboxAuthToken, BotHost: botHost, EchoMarks: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sc.c = c
	return sc
}

// waitEvents waits until the call's record holds every one of want among
// its events' texts (and, unless status is "", has that status).
func (sc *sandboxCall) waitEvents(ctx context.Context, t *testing.T, status string, want ...string) {
	t.Helper()
	for {
		res := sc.s.Do(t, "GET", "/api/calls/"+sc.c.CallSID, sc.tok, nil)
		var rec map[string]any
		res.JSON(t, &rec)
		events := eventTexts(rec)
		all := status == "" || rec["status"] == status
		for _, w := range want {
			all = all && strings.Contains(strings.Join(events, "\n"), w)
		}
		if all {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("events of the sandbox call = %q (record %s)", events, res.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkToolAndVoice checks that the webhook tool was called with the
// order id the sandbox's script asks for, and that the caller heard at
// least a second of the agent, a tenth of it loud.
func (sc *sandboxCall) checkToolAndVoice(t *testing.T) {
	t.Helper()
	select {
	case body := <-sc.hooked:
		if !strings.Contains(body, `"id":"42"`) {
			t.Errorf("webhook body %s", body)
		}
	default:
		t.Error("the webhook tool was not called")
	}
	heard := sc.c.Audio()
	var loud int
	for _, b := range heard {
		if v := g711.Decode(b); v > 2000 || v < -2000 {
			loud++
		}
	}
	if len(heard) < 8000 || loud < len(heard)/10 {
		t.Fatalf("the caller heard %d bytes of agent audio, %d of them loud", len(heard), loud)
	}
}
