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

// createHeld holds inserts, creates the first session and waits until its
// insert is in flight (counted, held), then creates the others
// concurrently, releases the hold once they all wait behind it, and
// returns each create's error and the statements they took. Starting the
// first alone keeps the scheduler from letting it take the others into
// its own flush before it reaches the database.
func createHeld(t *testing.T, db *store.DB, sessions []agentline.WidgetSession) ([]error, int64) {
	t.Helper()
	release := db.HoldSessionInserts(t)
	before := db.Statements()
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	create := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.CreateWidgetSession(context.Background(), sessions[i], started)
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	wait := func(what string, done func() bool) {
		for !done() {
			if time.Now().After(deadline) {
				release()
				t.Fatalf("%s: %d statements, %d sessions queued", what, db.Statements()-before, db.QueuedSessions())
			}
			time.Sleep(time.Millisecond)
		}
	}
	create(0)
	wait("first insert in flight", func() bool { return db.Statements() > before })
	for i := 1; i < len(sessions); i++ {
		create(i)
	}
	wait("the others queued", func() bool { return db.QueuedSessions() == len(sessions)-1 })
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
		errs, n := createHeld(t, db, quiet)
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
		if errs, _ := createHeld(t, db, mixed); errors.Join(errs...) != nil {
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
		errs, _ := createHeld(t, db, sessions)
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
