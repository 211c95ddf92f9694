package telephony_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/realtimefake"
)

// sessionInstructions is the instructions of the session.update the model
// got.
func sessionInstructions(t *testing.T, ss *realtimefake.Session) string {
	t.Helper()
	update, err := ss.WaitType(testCtx(t), "session.update")
	if err != nil {
		t.Fatal(err)
	}
	var u struct{ Session struct{ Instructions string } }
	json.Unmarshal(update.Raw, &u)
	return u.Session.Instructions
}

// Save twice, publish the first save: a phone call runs the published
// version (the model's session.update carries its instructions), the
// conversation records it and filters by it, and a rollback is the next
// call's version. A test call may ask for any version, draft included.
func TestCallsRunThePublishedVersion(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	agentPath := fmt.Sprintf("/api/agents/%d", e.ada)
	var a agentline.Agent
	for _, text := range []string{"First save.", "Second save."} {
		res := e.do(e.owner, "PATCH", agentPath, map[string]any{"instructions": text})
		if res.status != 200 {
			t.Fatalf("save: %d %s", res.status, res.body)
		}
		res.json(&a)
	}
	if a.Version != 3 || a.PublishedVersion != 3 {
		t.Fatalf("after two saves: version %d, published %d", a.Version, a.PublishedVersion)
	}
	if res := e.do(e.editor, "POST", agentPath+"/versions/2/publish", nil); res.status != 200 {
		t.Fatalf("publish 2: %d %s", res.status, res.body)
	}
	c, ss := e.call(ctx, true)
	if got := sessionInstructions(t, ss); !strings.HasPrefix(got, "First save.") {
		t.Fatalf("the call runs %q, want the published version's instructions", got)
	}
	c.Stop(ctx)
	rec := e.record(c.CallSID)
	id := agentline.CallConversationID(int64(rec["id"].(float64)))
	var conv agentline.Conversation
	e.do(e.viewer, "GET", "/api/conversations/"+id, nil).json(&conv)
	if conv.AgentVersion == nil || *conv.AgentVersion != 2 {
		t.Fatalf("conversation agent_version = %v, want 2", conv.AgentVersion)
	}
	var page struct{ Conversations []agentline.Conversation }
	e.do(e.viewer, "GET", fmt.Sprintf("/api/projects/%d/conversations?agent_version=2", e.project), nil).json(&page)
	if len(page.Conversations) != 1 || page.Conversations[0].ID != id {
		t.Fatalf("agent_version=2 lists %+v", page.Conversations)
	}
	e.do(e.viewer, "GET", fmt.Sprintf("/api/projects/%d/conversations?agent_version=3", e.project), nil).json(&page)
	if len(page.Conversations) != 0 {
		t.Fatalf("agent_version=3 lists %+v", page.Conversations)
	}

	// Rollback to the agent as it was created (no instructions).
	if res := e.do(e.editor, "POST", agentPath+"/versions/1/publish", nil); res.status != 200 {
		t.Fatalf("publish 1: %d %s", res.status, res.body)
	}
	c2, ss2 := e.call(ctx, true)
	if got := sessionInstructions(t, ss2); strings.Contains(got, "save.") {
		t.Fatalf("after the rollback the call runs %q", got)
	}
	c2.Stop(ctx)
	e.record(c2.CallSID)

	// A test call of the draft records the version it asked for.
	res := e.do(e.editor, "POST", agentPath+"/test-calls?version=3", nil)
	var started struct {
		ConversationID string `json:"conversation_id"`
	}
	if res.status != 201 {
		t.Fatalf("test call of version 3: %d %s", res.status, res.body)
	}
	res.json(&started)
	e.do(e.viewer, "GET", "/api/conversations/"+started.ConversationID, nil).json(&conv)
	if conv.AgentVersion == nil || *conv.AgentVersion != 3 {
		t.Fatalf("test call agent_version = %v, want 3", conv.AgentVersion)
	}
	for q, want := range map[string]int{"version=99": 404, "version=abc": 400, "version=0": 400} {
		if res := e.do(e.editor, "POST", agentPath+"/test-calls?"+q, nil); res.status != want {
			t.Errorf("test call ?%s = %d %s, want %d", q, res.status, res.body, want)
		}
	}
}
