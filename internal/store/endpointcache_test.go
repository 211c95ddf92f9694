package store_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// TestEmitsFollowEveryEndpointChange: an event goes to the endpoints
// enabled and subscribed when it is emitted, through every change to them
// (create, events changed, disabled, enabled again, deleted, another
// project's), although SQLite keeps each project's endpoints between emits
// (endpointcache.go): there, an emit after the first reads none.
func TestEmitsFollowEveryEndpointChange(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		db.SetOutbox(store.OutboxOptions{Enqueue: func(context.Context, *sql.Tx, []agentline.Job) error { return nil }})
		u := mustUser(t, db, "a@example.com")
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		other, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
		ada := mustAgent(t, db, p.ID, "Ada")
		calls := 0
		// emit changes a new call's status once: one call.status_changed.
		emit := func() {
			t.Helper()
			calls++
			sid := "CA" + string(rune('a'+calls))
			if _, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: ada.ID, CallSID: sid, Direction: agentline.CallOutbound,
				From: "+14155550100", To: "+14155550199", Status: agentline.CallQueued}, 100); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: agentline.CallRinging}, callChanged); err != nil {
				t.Fatal(err)
			}
		}
		deliveries := func(ep agentline.WebhookEndpoint) int {
			t.Helper()
			list, err := db.WebhookDeliveries(ctx, p.ID, ep.ID, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			return len(list)
		}
		want := func(step string, ep agentline.WebhookEndpoint, n int) {
			t.Helper()
			if got := deliveries(ep); got != n {
				t.Fatalf("%s: %d deliveries, want %d", step, got, n)
			}
		}
		emit() // no endpoint yet: kept as "none"
		ep, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: p.ID, URL: "https://hooks.example.com/a", Enabled: true,
			Events: []string{agentline.EventCallStatusChanged}, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
		if err != nil {
			t.Fatal(err)
		}
		statementsOf := func(f func()) int64 {
			before := db.Statements()
			f()
			return db.Statements() - before
		}
		missed, kept := statementsOf(emit), statementsOf(emit)
		want("created, then kept", ep, 2)
		if missed-kept != map[bool]int64{true: 1, false: 0}[db.Dialect() == store.SQLite] {
			t.Errorf("the first emit after the change made %d statements, the next %d: want one read fewer on SQLite only", missed, kept)
		}
		want("kept", ep, 2)
		ep.Events = []string{agentline.EventConversationEnded}
		if ep, err = db.UpdateWebhook(ctx, ep); err != nil {
			t.Fatal(err)
		}
		emit()
		want("unsubscribed", ep, 2)
		ep.Events = []string{agentline.EventCallStatusChanged}
		if ep, err = db.UpdateWebhook(ctx, ep); err != nil {
			t.Fatal(err)
		}
		emit()
		want("subscribed again", ep, 3)
		if err := db.DisableWebhook(ctx, ep.ID, "failing"); err != nil {
			t.Fatal(err)
		}
		emit()
		want("disabled", ep, 3)
		ep.Enabled = true
		if ep, err = db.UpdateWebhook(ctx, ep); err != nil {
			t.Fatal(err)
		}
		emit()
		want("enabled again", ep, 4)
		if _, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: other.ID, URL: "https://hooks.example.com/b", Enabled: true,
			Events: []string{agentline.EventCallStatusChanged}, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}); err != nil {
			t.Fatal(err)
		}
		emit()
		want("another project's endpoint", ep, 5)
		second, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: p.ID, URL: "https://hooks.example.com/c", Enabled: true,
			Events: []string{agentline.EventCallStatusChanged}, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteWebhook(ctx, p.ID, ep.ID); err != nil {
			t.Fatal(err)
		}
		emit()
		want("the second endpoint", second, 1)
		if n := deliveries(ep); n != 0 {
			t.Fatalf("the deleted endpoint still has %d deliveries", n)
		}
	})
}
