package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A session with no event for longer than the idle timeout is abandoned
// with its duration up to the last event; a heartbeat keeps one alive; a
// session_ended ends one as ended; a live chat that never connected is
// abandoned after its own timeout. Each end emits conversation.ended.
func TestAbandonIdleSessions(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		ep := subscribe(t, db, f.p1.ID)
		now := time.Now().UTC().Truncate(time.Millisecond)
		start := now.Add(-10 * time.Minute)
		for _, id := range []string{"ses_alive", "ses_idle", "ses_ended"} {
			if _, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: id, ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID,
				Provider: agentline.ProviderOpenAI, StartedAt: start}, started); err != nil {
				t.Fatal(err)
			}
		}
		say := json.RawMessage(`{"role":"user","text":"hello"}`)
		report := func(id string, events ...agentline.SessionEvent) {
			t.Helper()
			if err := db.AddSessionEvents(ctx, f.p1.ID, id, events, ended); err != nil {
				t.Fatal(err)
			}
		}
		report("ses_alive", agentline.SessionEvent{Type: agentline.EventTranscript, At: start.Add(time.Minute), Data: say},
			agentline.SessionEvent{Type: agentline.EventHeartbeat, At: now.Add(-5 * time.Second)})
		report("ses_idle", agentline.SessionEvent{Type: agentline.EventTranscript, At: start.Add(2 * time.Minute), Data: say})
		report("ses_ended", agentline.SessionEvent{Type: agentline.EventSessionEnded, At: start.Add(3 * time.Minute)})
		if _, err := db.CreateLead(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLiveChat, Answers: map[string]any{}},
			&agentline.WidgetSession{ID: "ses_gate", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID}); err != nil {
			t.Fatal(err)
		}
		idle, connect := now.Add(-2*time.Minute), now.Add(-time.Hour)
		n, err := db.AbandonIdleSessions(ctx, idle, connect, ended)
		if err != nil || n != 1 {
			t.Fatalf("sweep = %d %v, want 1", n, err)
		}
		want := map[string]struct {
			status, reason string
			duration       time.Duration
		}{
			"ses_alive": {"live", "", 0},
			"ses_idle":  {"abandoned", "idle_timeout", 2 * time.Minute},
			"ses_ended": {"ended", "ended", 3 * time.Minute},
			"ses_gate":  {"live", "", 0},
		}
		for id, w := range want {
			c, err := db.Conversation(ctx, f.p1.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != w.status || c.EndReason != w.reason || c.DurationMS != w.duration.Milliseconds() {
				t.Errorf("%s = %s %q %d ms, want %+v", id, c.Status, c.EndReason, c.DurationMS, w)
			}
		}
		if c, _ := db.Conversation(ctx, f.p1.ID, "ses_alive"); c.LastEventAt == nil || !c.LastEventAt.Equal(now.Add(-5*time.Second)) {
			t.Errorf("heartbeat: last_event_at = %v", c.LastEventAt)
		}
		// The live chat's own, longer timeout passes; a second sweep finds
		// nothing else.
		connect = now.Add(time.Second)
		if n, err := db.AbandonIdleSessions(ctx, idle, connect, ended); err != nil || n != 1 {
			t.Fatalf("second sweep = %d %v", n, err)
		}
		if c, _ := db.Conversation(ctx, f.p1.ID, "ses_gate"); c.Status != "abandoned" || c.EndReason != "never_connected" || c.Kind != "live_chat" {
			t.Fatalf("gate = %+v", c)
		}
		if n, err := db.AbandonIdleSessions(ctx, idle, connect, ended); err != nil || n != 0 {
			t.Fatalf("third sweep = %d %v", n, err)
		}
		// A late session_ended does not revive or re-end an abandoned one.
		report("ses_idle", agentline.SessionEvent{Type: agentline.EventSessionEnded, At: now})
		if c, _ := db.Conversation(ctx, f.p1.ID, "ses_idle"); c.Status != "abandoned" {
			t.Fatalf("late end: %+v", c)
		}
		for id, w := range map[string][]string{
			"ses_idle":  {"conversation.started", "conversation.ended"},
			"ses_ended": {"conversation.started", "conversation.ended"},
			"ses_alive": {"conversation.started"},
			"ses_gate":  {"conversation.ended"},
		} {
			if got := eventTypes(t, db, f.p1.ID, ep.ID, id); !equal(got, w) {
				t.Errorf("%s events = %v, want %v", id, got, w)
			}
		}
	})
}
