package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
)

// BenchmarkCallConversation reads one call's conversation, as each call's
// analysis does, in a project with 5000 calls on SQLite.
func BenchmarkCallConversation(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	u, err := db.CreateUser(ctx, "a@example.com", "unused-hash")
	if err != nil {
		b.Fatal(err)
	}
	p, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
	a := agentline.Agent{ProjectID: p.ID, Name: "Ada", Model: "gpt-realtime"}
	if err := a.Validate(); err != nil {
		b.Fatal(err)
	}
	ada, err := db.CreateAgent(ctx, a)
	if err != nil {
		b.Fatal(err)
	}
	var last agentline.Call
	for i := range 5000 {
		last, err = db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: ada.ID, CallSID: fmt.Sprintf("CA%032d", i),
			Direction: agentline.CallInbound, From: "+14155550199", To: "+14155550100", Status: agentline.CallCompleted}, 1<<30)
		if err != nil {
			b.Fatal(err)
		}
	}
	id := agentline.CallConversationID(last.ID)
	for b.Loop() {
		if _, err := db.Conversation(ctx, p.ID, id); err != nil {
			b.Fatal(err)
		}
	}
}
