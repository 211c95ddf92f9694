package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A session of a project without webhook endpoints is one statement; one
// of a project with an enabled endpoint is written in a transaction with
// its conversation.started event. Both refuse a duplicate id and an
// unknown project as before.
func TestCreateWidgetSessionPaths(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		ep := subscribe(t, db, f.p2.ID)
		create := func(id string, p agentline.Project, c agentline.Channel, a agentline.Agent) (int64, error) {
			before := db.Statements()
			_, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: id, ProjectID: p.ID, ChannelID: c.ID, AgentID: a.ID, Provider: agentline.ProviderOpenAI}, started)
			return db.Statements() - before, err
		}
		if n, err := create("ses_quiet", f.p1, f.c1, f.a1); err != nil || n != 1 {
			t.Fatalf("session without endpoints: %d statements, %v; want 1, nil", n, err)
		}
		if s, err := db.WidgetSession(ctx, f.p1.ID, "ses_quiet"); err != nil || s.AgentID != f.a1.ID || s.StartedAt.IsZero() {
			t.Fatalf("stored session %+v, %v", s, err)
		}
		if n, err := create("ses_heard", f.p2, f.c2, f.a2); err != nil || n < 5 {
			t.Fatalf("session with an endpoint: %d statements, %v; want the probe and a transaction", n, err)
		}
		if got := eventTypes(t, db, f.p2.ID, ep.ID, ""); !slices.Contains(got, agentline.EventConversationStarted) {
			t.Fatalf("events %v, want conversation.started", got)
		}
		for _, p := range []struct {
			p agentline.Project
			c agentline.Channel
			a agentline.Agent
		}{{f.p1, f.c1, f.a1}, {f.p2, f.c2, f.a2}} {
			if _, err := create("ses_quiet", p.p, p.c, p.a); agentline.ErrorCode(err) != agentline.EConflict {
				t.Errorf("duplicate id in project %d: %v, want a conflict", p.p.ID, err)
			}
		}
		if _, err := create("ses_lost", agentline.Project{ID: 987654}, f.c1, f.a1); !errors.Is(err, agentline.ErrNotFound) {
			t.Errorf("unknown project: %v, want not found", err)
		}
	})
}
