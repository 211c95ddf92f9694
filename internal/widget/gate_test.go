package widget_test

import (
	"context"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
)

// TestPendingSessionStartsOnce: the session a form submission created in
// advance lets one widget session start; starting it again answers 409
// and mints no second provider token.
func TestPendingSessionStartsOnce(t *testing.T) {
	e := newEnv(t, envOptions{})
	pre, err := e.db.CreateWidgetSession(context.Background(), agentline.WidgetSession{ID: "ses_gate", ProjectID: e.project.ID, ChannelID: e.channel.ID, AgentID: e.agent.ID}, conversation.Started)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"agent_id": e.agent.ID, "session_id": pre.ID}
	var s sessionAnswer
	e.do("POST", "/widget/v1/session", "", e.key, body, 201, &s)
	if s.SessionID != pre.ID || s.ClientSecret == "" {
		t.Fatalf("first start = %+v", s)
	}
	minted := len(e.fake.Requests())
	if status, code := e.errorCode("POST", "/widget/v1/session", "", e.key, body); status != 409 || code != agentline.EConflict {
		t.Fatalf("second start = %d %s, want 409 conflict", status, code)
	}
	if n := len(e.fake.Requests()); n != minted {
		t.Fatalf("the second start minted a provider token (%d requests, was %d)", n, minted)
	}
}
