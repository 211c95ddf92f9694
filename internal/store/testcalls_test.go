package store_test

import (
	"context"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Migration 00018 lets calls have direction test (calls from the console's
// browser) and nothing else new; a test call is a phone conversation of
// that direction.
func TestTestCallDirection(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "owner@example.com")
		p, err := db.CreateProject(ctx, agentline.Project{Name: "p"}, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		a := mustAgent(t, db, p.ID, "Ada")
		c, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: a.ID, CallSID: "CA01", Direction: agentline.CallTest,
			From: u.Email, Status: agentline.CallQueued}, 5)
		if err != nil {
			t.Fatalf("a test call: %v", err)
		}
		conv, err := db.Conversation(ctx, p.ID, agentline.CallConversationID(c.ID))
		if err != nil || conv.Kind != agentline.ConversationPhone || conv.Direction != agentline.CallTest || conv.From != u.Email {
			t.Errorf("its conversation %+v, %v", conv, err)
		}
		if _, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: a.ID, CallSID: "CA02", Direction: "sideways",
			Status: agentline.CallQueued}, 5); err == nil {
			t.Error("a call of direction sideways was stored")
		}
	})
}
