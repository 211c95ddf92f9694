package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// createHeld holds inserts, creates the sessions concurrently, releases
// the hold once queued of them wait behind the one whose insert is held,
// and returns each create's error and the statements they took.
func createHeld(t *testing.T, db *store.DB, sessions []agentline.WidgetSession, queued int) ([]error, int64) {
	t.Helper()
	release := db.HoldSessionInserts(t)
	before := db.Statements()
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.CreateWidgetSession(context.Background(), s, started)
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.QueuedSessions() < queued {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("%d of %d sessions queued", db.QueuedSessions(), queued)
		}
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	return errs, db.Statements() - before
}

// Sessions that arrive while an insert is in flight are written together
// by the next ones: the first of 71 sessions is in flight alone, the 70
// behind it take two statements (64 and 6 rows), and each is stored. Sessions of a project with an endpoint leave the
// batch for their own transaction with conversation.started.
func TestSessionBatchGroupsWaitingSessions(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		ep := subscribe(t, db, f.p2.ID)
		var quiet []agentline.WidgetSession
		for i := range 71 {
			quiet = append(quiet, agentline.WidgetSession{ID: fmt.Sprintf("ses_q%02d", i), ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID})
		}
		errs, n := createHeld(t, db, quiet, len(quiet)-1)
		if err := errors.Join(errs...); err != nil || n != 3 {
			t.Fatalf("71 sessions: %d statements, %v; want 3, nil", n, err)
		}
		for _, s := range quiet {
			if got, err := db.WidgetSession(ctx, f.p1.ID, s.ID); err != nil || got.ChannelID != f.c1.ID || got.StartedAt.IsZero() {
				t.Fatalf("stored %+v, %v", got, err)
			}
		}
		mixed := []agentline.WidgetSession{
			{ID: "ses_m1", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID},
			{ID: "ses_h1", ProjectID: f.p2.ID, ChannelID: f.c2.ID, AgentID: f.a2.ID},
			{ID: "ses_m2", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID},
			{ID: "ses_h2", ProjectID: f.p2.ID, ChannelID: f.c2.ID, AgentID: f.a2.ID},
		}
		// Which session reaches the batch first is up to the scheduler: when
		// one of the project with an endpoint does, it leaves the batch at
		// once, and fewer than three ever wait behind the held insert. One
		// always does: the second of ses_m1 and ses_m2.
		if errs, _ := createHeld(t, db, mixed, 1); errors.Join(errs...) != nil {
			t.Fatalf("mixed batch: %v", errs)
		}
		for _, s := range mixed {
			if _, err := db.WidgetSession(ctx, s.ProjectID, s.ID); err != nil {
				t.Errorf("session %s: %v", s.ID, err)
			}
		}
		started := 0
		for _, e := range eventTypes(t, db, f.p2.ID, ep.ID, "") {
			if e == agentline.EventConversationStarted {
				started++
			}
		}
		if started != 2 {
			t.Errorf("%d conversation.started events, want one per session of the project with an endpoint", started)
		}
	})
}

// A row that fails the batch's statement (a duplicate id, an unknown
// project) fails only its own request: the others are written alone.
func TestSessionBatchKeepsErrorsPerRequest(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		if _, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: "ses_taken", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID}, started); err != nil {
			t.Fatal(err)
		}
		sessions := []agentline.WidgetSession{
			{ID: "ses_a", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID},
			{ID: "ses_taken", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID},
			{ID: "ses_lost", ProjectID: 987654, ChannelID: f.c1.ID, AgentID: f.a1.ID},
			{ID: "ses_b", ProjectID: f.p2.ID, ChannelID: f.c2.ID, AgentID: f.a2.ID},
		}
		errs, _ := createHeld(t, db, sessions, len(sessions)-1)
		if errs[0] != nil || errs[3] != nil {
			t.Errorf("good sessions: %v, %v; want nil", errs[0], errs[3])
		}
		if agentline.ErrorCode(errs[1]) != agentline.EConflict {
			t.Errorf("duplicate id: %v, want a conflict", errs[1])
		}
		if !errors.Is(errs[2], agentline.ErrNotFound) {
			t.Errorf("unknown project: %v, want not found", errs[2])
		}
		for _, s := range []agentline.WidgetSession{sessions[0], sessions[3]} {
			if _, err := db.WidgetSession(ctx, s.ProjectID, s.ID); err != nil {
				t.Errorf("session %s: %v", s.ID, err)
			}
		}
	})
}
