package widget_test

import (
	"testing"

	"github.com/agentline/agentline"
)

// A heartbeat is accepted alone or in a batch and is not stored: the
// session's events stay its conversation. Its answer tells a client whose
// session is gone (404).
func TestHeartbeat(t *testing.T) {
	e := newEnv(t, envOptions{})
	var s struct {
		SessionID string `json:"session_id"`
	}
	e.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, 201, &s)
	beat := map[string]any{"type": "heartbeat"}
	var ack struct{ Accepted int }
	e.do("POST", "/widget/v1/analytics", "", e.key, map[string]any{"session_id": s.SessionID, "events": []any{beat}}, 202, &ack)
	if ack.Accepted != 1 {
		t.Fatalf("accepted %d", ack.Accepted)
	}
	line := map[string]any{"type": "transcript", "data": map[string]any{"role": "user", "text": "Hi"}}
	e.do("POST", "/widget/v1/analytics", "", e.key, map[string]any{"session_id": s.SessionID, "events": []any{beat, line, beat}}, 202, &ack)
	if ack.Accepted != 3 {
		t.Fatalf("accepted %d", ack.Accepted)
	}
	if status, code := e.errorCode("POST", "/widget/v1/analytics", "", e.key, map[string]any{"session_id": "nope", "events": []any{beat}}); status != 404 || code != agentline.ENotFound {
		t.Fatalf("heartbeat of an unknown session: %d %s", status, code)
	}
	var page struct {
		Sessions []struct {
			Transcript []struct{ Role, Text string }
		} `json:"sessions"`
	}
	e.do("GET", "/api/projects/"+itoa(e.project.ID)+"/sessions", e.owner, "", nil, 200, &page)
	if len(page.Sessions) != 1 || len(page.Sessions[0].Transcript) != 1 {
		t.Fatalf("sessions %+v", page.Sessions)
	}
}

// Any page may read an invalid_key answer, so that a widget can tell its
// site owner the key is wrong; an origin refusal stays unreadable.
func TestInvalidKeyIsReadable(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, key := range []string{"svc_pk_" + "0123456789abcdef0123456789abcdef", "not-a-key"} {
		resp := e.request("GET", "/widget/v1/config", "", key, nil, "Origin", "https://shop.example.com")
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Header.Get("Access-Control-Allow-Origin") != "https://shop.example.com" {
			t.Errorf("key %q: %d, ACAO %q", key, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	e.do("PATCH", "/api/channels/"+itoa(e.channel.ID)+"/key", e.owner, "", map[string]any{"allowed_origins": []string{"https://shop.example.com"}}, 200, nil)
	resp := e.request("GET", "/widget/v1/config", "", e.key, nil, "Origin", "https://evil.example.net")
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("origin refusal: %d, ACAO %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}
