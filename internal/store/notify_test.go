package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A lead's notify_url attempts are kept with the lead's project and
// channel, listed newest first per channel, never across projects, and go
// with their lead; an attempt for a lead gone meanwhile is dropped.
func TestNotifyAttempts(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		lead, err := db.CreateLead(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLeadCapture,
			Answers: map[string]any{"name": "Ada"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		for i, a := range []agentline.NotifyAttempt{
			{StatusCode: 503, Error: "the receiver answered 503 Service Unavailable", LatencyMS: 12},
			{Error: "blocked: 127.0.0.1 is a loopback address"},
			{Delivered: true, StatusCode: 204, LatencyMS: 30},
		} {
			a.ProjectID, a.ChannelID, a.LeadID, a.Attempt, a.MaxAttempts, a.At = f.p1.ID, f.c1.ID, lead.ID, i+1, 6, at.Add(time.Duration(i)*time.Second)
			if err := db.RecordNotifyAttempt(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		// Another project's id for the same lead records nothing.
		if err := db.RecordNotifyAttempt(ctx, agentline.NotifyAttempt{ProjectID: f.p2.ID, LeadID: lead.ID, Attempt: 9, At: at}); err != nil {
			t.Fatal(err)
		}
		got, err := db.NotifyAttempts(ctx, f.p1.ID, f.c1.ID, 0, 50)
		if err != nil || len(got) != 3 {
			t.Fatalf("NotifyAttempts = %+v %v", got, err)
		}
		last, first := got[0], got[2]
		if !last.Delivered || last.StatusCode != 204 || last.Attempt != 3 || last.MaxAttempts != 6 || last.LeadID != lead.ID || last.ChannelID != f.c1.ID ||
			!last.At.Equal(at.Add(2*time.Second)) || last.At.Location() != time.UTC {
			t.Errorf("the newest attempt: %+v", last)
		}
		if first.Delivered || first.StatusCode != 503 || first.Error == "" || first.LatencyMS != 12 {
			t.Errorf("the first attempt: %+v", first)
		}
		if got, _ := db.NotifyAttempts(ctx, f.p1.ID, f.c1.ID, 0, 1); len(got) != 1 || got[0].Attempt != 3 {
			t.Errorf("limit 1: %+v", got)
		}
		if got, _ := db.NotifyAttempts(ctx, f.p2.ID, f.c1.ID, 0, 50); len(got) != 0 {
			t.Errorf("another project sees %+v", got)
		}
		// Deleting the lead deletes its attempts; a late one is dropped.
		if err := db.DeleteLead(ctx, f.p1.ID, lead.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordNotifyAttempt(ctx, agentline.NotifyAttempt{ProjectID: f.p1.ID, LeadID: lead.ID, Attempt: 4, At: at}); err != nil {
			t.Errorf("an attempt for a deleted lead: %v", err)
		}
		if got, _ := db.NotifyAttempts(ctx, f.p1.ID, f.c1.ID, 0, 50); len(got) != 0 {
			t.Errorf("after the lead's deletion: %+v", got)
		}
	})
}
