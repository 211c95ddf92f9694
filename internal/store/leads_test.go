package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Leads are scoped to their project; a live chat lead and its session are
// stored together; listing filters and pages; deleting keeps the session.
func TestLeads(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		capture, err := db.CreateLead(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLeadCapture,
			Answers: map[string]any{"name": "Ada", "consent": true}}, nil)
		if err != nil || capture.ID == 0 || capture.SessionID != nil || capture.AgentID != nil {
			t.Fatalf("CreateLead = %+v %v", capture, err)
		}
		s := &agentline.WidgetSession{ID: "ses_lead1", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID}
		chat, err := db.CreateLead(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLiveChat,
			Answers: map[string]any{"name": "Bo"}}, s)
		if err != nil || chat.SessionID == nil || *chat.SessionID != "ses_lead1" || chat.AgentID == nil || *chat.AgentID != f.a1.ID {
			t.Fatalf("CreateLead live chat = %+v %v", chat, err)
		}
		if got, err := db.WidgetSession(ctx, f.p1.ID, "ses_lead1"); err != nil || got.AgentID != f.a1.ID {
			t.Fatalf("the lead's session: %+v %v", got, err)
		}
		// The same session id again fails whole: no second lead either.
		if _, err := db.CreateLead(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLiveChat,
			Answers: map[string]any{}}, s); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("duplicate session: %v", err)
		}
		got, err := db.Lead(ctx, f.p1.ID, capture.ID)
		if err != nil || got.Answers["name"] != "Ada" || got.Answers["consent"] != true || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("Lead = %+v %v", got, err)
		}
		if got, err := db.LeadBySession(ctx, f.p1.ID, "ses_lead1"); err != nil || got.ID != chat.ID {
			t.Fatalf("LeadBySession = %+v %v", got, err)
		}
		// Another project sees none of them.
		if _, err := db.Lead(ctx, f.p2.ID, capture.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("cross-project Lead: %v", err)
		}
		if _, err := db.LeadBySession(ctx, f.p2.ID, "ses_lead1"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("cross-project LeadBySession: %v", err)
		}
		if err := db.DeleteLead(ctx, f.p2.ID, capture.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("cross-project DeleteLead: %v", err)
		}
		if pid, err := db.ProjectOf(ctx, agentline.KindLead, chat.ID); err != nil || pid != f.p1.ID {
			t.Fatalf("ProjectOf = %d %v", pid, err)
		}
		list, err := db.Leads(ctx, f.p1.ID, agentline.SessionFilter{Limit: 10})
		if err != nil || len(list) != 2 || list[0].ID != chat.ID {
			t.Fatalf("Leads = %+v %v", list, err)
		}
		for _, c := range []struct {
			name string
			f    agentline.SessionFilter
			want int
		}{
			{"page", agentline.SessionFilter{Limit: 1, Offset: 1}, 1},
			{"other channel", agentline.SessionFilter{ChannelID: f.c2.ID, Limit: 10}, 0},
			{"agent", agentline.SessionFilter{AgentID: f.a1.ID, Limit: 10}, 1},
			{"future", agentline.SessionFilter{From: time.Now().Add(time.Hour), Limit: 10}, 0},
			{"past", agentline.SessionFilter{To: time.Now().Add(-time.Hour), Limit: 10}, 0},
		} {
			if list, err := db.Leads(ctx, f.p1.ID, c.f); err != nil || len(list) != c.want {
				t.Errorf("%s: %d leads %v, want %d", c.name, len(list), err, c.want)
			}
		}
		if err := db.DeleteLead(ctx, f.p1.ID, chat.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.WidgetSession(ctx, f.p1.ID, "ses_lead1"); err != nil {
			t.Fatalf("deleting the lead took its session: %v", err)
		}
		one, err := db.WidgetSessions(ctx, f.p1.ID, agentline.SessionFilter{ID: "ses_lead1", Limit: 2})
		if err != nil || len(one) != 1 {
			t.Fatalf("WidgetSessions by id = %d %v", len(one), err)
		}
	})
}
