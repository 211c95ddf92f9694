package widget_test

import (
	"fmt"
	"testing"

	"github.com/agentline/agentline"
)

// A console test session: started with the session token of an editor or
// owner, no channel and no key; tool calls and analytics on its console
// routes; stored with channel 0 and origin "console"; out of reach of keys,
// viewers and strangers.
func TestConsoleTestSession(t *testing.T) {
	e := newEnv(t, envOptions{})
	base := fmt.Sprintf("/api/agents/%d/test-session", e.agent.ID)
	var s sessionAnswer
	e.do("POST", base, e.owner, "", map[string]any{"agent_id": e.agent.ID}, 201, &s)
	if s.SessionID == "" || s.AgentID != e.agent.ID || s.Provider != "openai" || s.ClientSecret == "" || s.Connect.URL == "" {
		t.Fatalf("test session = %+v", s)
	}
	var out map[string]any
	e.do("POST", base+"/tools/execute", e.owner, "", map[string]any{"session_id": s.SessionID, "call_id": "c1", "name": "lookup_order",
		"arguments": `{"id":"7"}`}, 200, &out)
	if out["output"] != `order {"id":"7"} shipped` {
		t.Fatalf("tool answer = %v", out)
	}
	e.do("POST", base+"/analytics", e.owner, "", map[string]any{"session_id": s.SessionID, "events": []map[string]any{
		{"type": "transcript", "data": map[string]any{"role": "user", "text": "hello"}}}}, 202, nil)

	var list struct {
		Sessions []struct {
			ID        string `json:"id"`
			ChannelID int64  `json:"channel_id"`
			Origin    string `json:"origin"`
		} `json:"sessions"`
	}
	e.do("GET", fmt.Sprintf("/api/projects/%d/sessions", e.project.ID), e.owner, "", nil, 200, &list)
	found := false
	for _, x := range list.Sessions {
		if x.ID == s.SessionID {
			found = x.ChannelID == 0 && x.Origin == "console"
		}
	}
	if !found {
		t.Fatalf("test session not listed as channel 0 from console: %+v", list.Sessions)
	}

	_, stranger := e.newUser("stranger@example.com")
	for _, tc := range []struct {
		name, method, path, token, key string
		body                           any
		status                         int
		code                           string
	}{
		{"no token", "POST", base, "", "", map[string]any{}, 401, agentline.EUnauthorized},
		{"another agent in the body", "POST", base, e.owner, "", map[string]any{"agent_id": e.gemini.ID}, 400, agentline.EInvalid},
		{"continuing a session", "POST", base, e.owner, "", map[string]any{"session_id": "x"}, 400, agentline.EInvalid},
		{"viewer", "POST", base, e.viewer, "", map[string]any{}, 403, agentline.EForbidden},
		{"stranger", "POST", base, stranger, "", map[string]any{}, 404, agentline.ENotFound},
		{"missing agent", "POST", "/api/agents/999999/test-session", e.owner, "", map[string]any{}, 404, agentline.ENotFound},
		{"a key cannot reach a test session", "POST", "/widget/v1/tools/execute", "", e.key,
			map[string]any{"session_id": s.SessionID, "call_id": "c2", "name": "lookup_order"}, 404, agentline.ENotFound},
		{"a test route cannot reach a channel's session", "POST", base + "/tools/execute", e.owner, "",
			map[string]any{"session_id": e.widgetSession(), "call_id": "c3", "name": "lookup_order"}, 404, agentline.ENotFound},
		{"another agent's test route cannot reach the session", "POST", fmt.Sprintf("/api/agents/%d/test-session/tools/execute", e.gemini.ID), e.owner, "",
			map[string]any{"session_id": s.SessionID, "call_id": "c5", "name": "lookup_order"}, 404, agentline.ENotFound},
		{"viewer runs no tool", "POST", base + "/tools/execute", e.viewer, "",
			map[string]any{"session_id": s.SessionID, "call_id": "c4", "name": "lookup_order"}, 403, agentline.EForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, code := e.errorCode(tc.method, tc.path, tc.token, tc.key, tc.body); status != tc.status || code != tc.code {
				t.Fatalf("%s %s: %d %s, want %d %s", tc.method, tc.path, status, code, tc.status, tc.code)
			}
		})
	}
}

// widgetSession starts a session on the key's channel and returns its id.
func (e *env) widgetSession() string {
	var s sessionAnswer
	e.do("POST", "/widget/v1/session", "", e.key, map[string]any{"agent_id": e.agent.ID}, 201, &s)
	return s.SessionID
}

// Console test sessions of different agents never share a channel: two
// agents of two projects, and two agents of one project, each tested
// within the config cache's lifetime (3 s), all start, and each session
// is with its own agent.
func TestConsoleTestSessionsOfTwoAgents(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, pair := range [][2]agentline.Agent{{e.agent, e.otherAgent}, {e.otherAgent, e.gemini}} {
		for _, a := range pair {
			var s sessionAnswer
			e.do("POST", fmt.Sprintf("/api/agents/%d/test-session", a.ID), e.owner, "", map[string]any{}, 201, &s)
			if s.AgentID != a.ID {
				t.Fatalf("test session of agent %d is with agent %d", a.ID, s.AgentID)
			}
		}
	}
}
