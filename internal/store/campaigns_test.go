package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// newCampaign stores a draft campaign of the fixture's first project.
func newCampaign(t *testing.T, db *store.DB, projectID, agentID int64, name string) agentline.Campaign {
	t.Helper()
	c, err := db.CreateCampaign(context.Background(), agentline.Campaign{ProjectID: projectID, AgentID: agentID, Name: name,
		CallingWindow:      agentline.CallingWindow{Days: []string{"mon", "tue"}, Start: "09:00", End: "20:00"},
		MaxConcurrentCalls: 2, CallsPerSecond: 0.5, MaxAttempts: 3, RetryAfter: 90 * time.Second,
		Voicemail: agentline.Voicemail{Action: agentline.VoicemailLeaveMessage, Message: "Call us back"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func contacts(numbers ...string) []agentline.CampaignContact {
	out := make([]agentline.CampaignContact, len(numbers))
	for i, n := range numbers {
		out[i] = agentline.CampaignContact{PhoneNumber: n, Variables: map[string]string{"first_name": fmt.Sprint("N", i)}}
	}
	return out
}

// Campaigns are scoped to their project, keep their settings, move only
// along the transitions asked for, and keep a started campaign's agent.
func TestCampaigns(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		var queued []agentline.Job
		db.SetOutbox(store.OutboxOptions{Enqueue: func(_ context.Context, _ *sql.Tx, js []agentline.Job) error {
			queued = append(queued, js...)
			return nil
		}})
		c := newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
		if c.Status != agentline.CampaignDraft || c.RetryAfter != 90*time.Second || c.CallsPerSecond != 0.5 ||
			c.Voicemail.Message != "Call us back" || c.CallingWindow.Days[1] != "tue" || c.StartedAt != nil || c.NextDialAt.IsZero() {
			t.Fatalf("created %+v", c)
		}
		if pid, err := db.ProjectOf(ctx, agentline.KindCampaign, c.ID); err != nil || pid != f.p1.ID {
			t.Fatalf("ProjectOf = %d %v", pid, err)
		}
		if _, err := db.Campaign(ctx, f.p2.ID, c.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's campaign: %v", err)
		}
		// An agent of no project is not found.
		if _, err := db.CreateCampaign(ctx, agentline.Campaign{ProjectID: f.p1.ID, AgentID: 1 << 40, Name: "x"}); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("unknown agent: %v", err)
		}
		d := newCampaign(t, db, f.p1.ID, f.a1.ID, "Survey")
		newCampaign(t, db, f.p1.ID, f.a1.ID, "Reminders")
		newCampaign(t, db, f.p2.ID, f.a2.ID, "Elsewhere")
		page, err := db.Campaigns(ctx, f.p1.ID, 0, 2)
		if err != nil || len(page) != 2 || page[0].ID != c.ID || page[1].ID != d.ID {
			t.Fatalf("first page %+v %v", page, err)
		}
		if page, err = db.Campaigns(ctx, f.p1.ID, d.ID, 2); err != nil || len(page) != 1 || page[0].Name != "Reminders" {
			t.Fatalf("second page %+v %v", page, err)
		}

		// The agent changes while a draft; not once started.
		other, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: f.p1.ID, Name: "Bo", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI})
		if err != nil {
			t.Fatal(err)
		}
		c.AgentID, c.Name = other.ID, "Renewals 2"
		if c, err = db.UpdateCampaign(ctx, c); err != nil || c.AgentID != other.ID || c.Name != "Renewals 2" {
			t.Fatalf("update draft: %+v %v", c, err)
		}
		moved, ok, err := db.TransitionCampaign(ctx, f.p1.ID, c.ID, []string{agentline.CampaignDraft}, agentline.CampaignRunning)
		if err != nil || !ok || moved.Status != agentline.CampaignRunning || moved.StartedAt == nil || moved.FinishedAt != nil {
			t.Fatalf("start: %+v %v %v", moved, ok, err)
		}
		c.AgentID = f.a1.ID
		if _, err := db.UpdateCampaign(ctx, c); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("agent of a running campaign: %v", err)
		}
		c.AgentID, c.MaxAttempts = other.ID, 5
		if c, err = db.UpdateCampaign(ctx, c); err != nil || c.MaxAttempts != 5 || c.Status != agentline.CampaignRunning {
			t.Fatalf("limits of a running campaign: %+v %v", c, err)
		}
		c.ProjectID = f.p2.ID
		if _, err := db.UpdateCampaign(ctx, c); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("update from another project: %v", err)
		}
		c.ProjectID = f.p1.ID

		// A transition from the wrong status does not move it.
		if got, ok, err := db.TransitionCampaign(ctx, f.p1.ID, c.ID, []string{agentline.CampaignDraft}, agentline.CampaignRunning); err != nil || ok || got.Status != agentline.CampaignRunning {
			t.Fatalf("second start: %+v %v %v", got, ok, err)
		}
		if _, _, err := db.TransitionCampaign(ctx, f.p2.ID, c.ID, []string{agentline.CampaignRunning}, agentline.CampaignPaused); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("transition from another project: %v", err)
		}
		if err := db.DeleteCampaign(ctx, f.p1.ID, c.ID); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("delete a running campaign: %v", err)
		}
		for _, step := range []struct{ from, to string }{
			{agentline.CampaignRunning, agentline.CampaignPaused},
			{agentline.CampaignPaused, agentline.CampaignRunning},
			{agentline.CampaignRunning, agentline.CampaignCancelled},
		} {
			if got, ok, err := db.TransitionCampaign(ctx, f.p1.ID, c.ID, []string{step.from}, step.to); err != nil || !ok || got.Status != step.to {
				t.Fatalf("%s -> %s: %+v %v %v", step.from, step.to, got, ok, err)
			}
		}
		// Starting and resuming enqueued the campaign's dialing, and
		// nothing else did.
		dial := agentline.DialCampaign{ProjectID: f.p1.ID, CampaignID: c.ID}
		if len(queued) != 2 || queued[0] != dial || queued[1] != dial {
			t.Fatalf("enqueued %v", queued)
		}
		if got, _ := db.Campaign(ctx, f.p1.ID, c.ID); got.FinishedAt == nil || !got.StartedAt.Equal(*moved.StartedAt) {
			t.Fatalf("cancelled: %+v", got)
		}
		if err := db.DeleteCampaign(ctx, f.p2.ID, c.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("delete from another project: %v", err)
		}
		if err := db.DeleteCampaign(ctx, f.p1.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Campaign(ctx, f.p1.ID, c.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("deleted: %v", err)
		}
		// Deleting the agent deletes its campaigns.
		if err := db.DeleteAgent(ctx, f.p1.ID, f.a1.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Campaign(ctx, f.p1.ID, d.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("campaign of a deleted agent: %v", err)
		}
	})
}

// Contacts are added all at once: numbers the campaign has are
// duplicates, numbers on the do-not-call list are stored do_not_call, the
// campaign's limit holds, and the list pages, filters and counts.
func TestCampaignContacts(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		c := newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
		if _, _, err := db.AddDoNotCall(ctx, f.p1.ID, agentline.DoNotCall{PhoneNumber: "+14155550103", Reason: "asked"}); err != nil {
			t.Fatal(err)
		}
		// The other project's list does not apply here.
		if _, _, err := db.AddDoNotCall(ctx, f.p2.ID, agentline.DoNotCall{PhoneNumber: "+14155550101"}); err != nil {
			t.Fatal(err)
		}
		first := contacts("+14155550101", "+14155550102", "+14155550103")
		at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		first[0].Consent = &agentline.ContactConsent{Source: "web form", At: at}
		first[1].Timezone = "America/Chicago"
		added, dups, listed, err := db.AddContacts(ctx, f.p1.ID, c.ID, first, 10)
		if err != nil || added != 3 || dups != 0 || listed != 1 {
			t.Fatalf("AddContacts = %d %d %d %v", added, dups, listed, err)
		}
		added, dups, listed, err = db.AddContacts(ctx, f.p1.ID, c.ID, contacts("+14155550102", "+14155550104"), 10)
		if err != nil || added != 1 || dups != 1 || listed != 0 {
			t.Fatalf("again = %d %d %d %v", added, dups, listed, err)
		}
		// Over the campaign's limit, nothing of the upload is kept.
		if _, _, _, err := db.AddContacts(ctx, f.p1.ID, c.ID, contacts("+14155550105", "+14155550106"), 5); agentline.ErrorCode(err) != agentline.ETooLarge {
			t.Fatalf("over the limit: %v", err)
		}
		if _, _, _, err := db.AddContacts(ctx, f.p2.ID, c.ID, contacts("+14155550107"), 10); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's campaign: %v", err)
		}
		got, err := db.Campaign(ctx, f.p1.ID, c.ID)
		want := agentline.CampaignCounts{Total: 4, Pending: 3, DoNotCall: 1}
		if err != nil || got.Counts != want {
			t.Fatalf("counts %+v, want %+v (%v)", got.Counts, want, err)
		}
		all, err := db.CampaignContacts(ctx, f.p1.ID, c.ID, "", 0, 10)
		if err != nil || len(all) != 4 {
			t.Fatalf("contacts %+v %v", all, err)
		}
		a := all[0]
		if a.PhoneNumber != "+14155550101" || a.Consent == nil || !a.Consent.At.Equal(at) || a.Consent.Source != "web form" ||
			a.Variables["first_name"] != "N0" || a.NextAttemptAt == nil || a.LastOutcome != nil || len(a.ConversationIDs) != 0 {
			t.Fatalf("first contact %+v", a)
		}
		if all[1].Timezone != "America/Chicago" || all[1].Consent != nil || all[2].Status != agentline.ContactDoNotCall || all[2].NextAttemptAt != nil {
			t.Fatalf("contacts %+v", all)
		}
		page, err := db.CampaignContacts(ctx, f.p1.ID, c.ID, agentline.ContactPending, all[0].ID, 1)
		if err != nil || len(page) != 1 || page[0].ID != all[1].ID {
			t.Fatalf("pending after the first: %+v %v", page, err)
		}
		if page, err := db.CampaignContacts(ctx, f.p2.ID, c.ID, "", 0, 10); err != nil || len(page) != 0 {
			t.Fatalf("from another project: %+v %v", page, err)
		}
		if _, _, err := db.TransitionCampaign(ctx, f.p1.ID, c.ID, []string{agentline.CampaignDraft}, agentline.CampaignCancelled); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := db.AddContacts(ctx, f.p1.ID, c.ID, contacts("+14155550108"), 10); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("a cancelled campaign: %v", err)
		}
	})
}

// A contact's dials give its conversations and its last outcome, with the
// analysis of the last conversation; deleting the call keeps the dial.
func TestContactDials(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		c := newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
		if _, _, _, err := db.AddContacts(ctx, f.p1.ID, c.ID, contacts("+14155550101", "+14155550102"), 10); err != nil {
			t.Fatal(err)
		}
		list, _ := db.CampaignContacts(ctx, f.p1.ID, c.ID, "", 0, 10)
		ct := list[0]
		var calls []int64
		for i := range 2 {
			call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: fmt.Sprint("CAdial", i),
				Direction: agentline.CallOutbound, From: "+14155550100", To: ct.PhoneNumber, Status: agentline.CallQueued}, 10)
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, call.ID)
		}
		for i, outcome := range []string{agentline.ContactBusy, agentline.ContactCompleted} {
			mustExec(t, db, fmt.Sprintf(`INSERT INTO campaign_dials (campaign_id, contact_id, project_id, attempt, call_id, dialed_at, consent_source, outcome)
				VALUES (%d, %d, %d, %d, %d, '2024-06-03 14:00:0%d+00:00', 'web form', '%s')`, c.ID, ct.ID, f.p1.ID, i+1, calls[i], i, outcome))
		}
		conv := agentline.CallConversationID(calls[1])
		mustExec(t, db, fmt.Sprintf(`INSERT INTO conversation_analyses (conversation_id, project_id, agent_id, status, summary, success, created_at, updated_at)
			VALUES ('%s', %d, %d, 'done', 'Renewed for a year', TRUE, '2024-06-03 14:05:00+00:00', '2024-06-03 14:05:00+00:00')`, conv, f.p1.ID, f.a1.ID))
		list, err := db.CampaignContacts(ctx, f.p1.ID, c.ID, "", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		got := list[0]
		o := got.LastOutcome
		if len(got.Dials) != 2 || got.Dials[0].Consent == nil || got.Dials[0].Consent.Source != "web form" ||
			len(got.ConversationIDs) != 2 || got.ConversationIDs[1] != conv || o == nil || o.ConversationID != conv ||
			o.Outcome != agentline.ContactCompleted || o.Success == nil || !*o.Success || o.Summary != "Renewed for a year" {
			t.Fatalf("contact %+v, outcome %+v", got, o)
		}
		if list[1].LastOutcome != nil || len(list[1].Dials) != 0 {
			t.Fatalf("undialed contact %+v", list[1])
		}
		if err := db.DeleteCall(ctx, f.p1.ID, calls[1]); err != nil {
			t.Fatal(err)
		}
		list, _ = db.CampaignContacts(ctx, f.p1.ID, c.ID, "", 0, 10)
		if got := list[0]; len(got.Dials) != 2 || len(got.ConversationIDs) != 1 || got.LastOutcome.ConversationID != "" ||
			got.LastOutcome.Outcome != agentline.ContactCompleted {
			t.Fatalf("after the call's deletion: %+v %+v", got, got.LastOutcome)
		}
		// One dial per contact and attempt.
		err = db.ExecAdmin(ctx, fmt.Sprintf(`INSERT INTO campaign_dials (campaign_id, contact_id, project_id, attempt, dialed_at)
			VALUES (%d, %d, %d, 1, '2024-06-03 15:00:00+00:00')`, c.ID, ct.ID, f.p1.ID))
		if err == nil {
			t.Fatal("a second dial of attempt 1 was stored")
		}
		// A call keeps its campaign until the campaign goes; the project
		// goes with everything in it.
		mustExec(t, db, fmt.Sprintf(`UPDATE calls SET campaign_id = %d, contact_id = %d, variables = '{"first_name":"N0"}' WHERE id = %d`,
			c.ID, ct.ID, calls[0]))
		if _, _, err := db.TransitionCampaign(ctx, f.p1.ID, c.ID, []string{agentline.CampaignDraft}, agentline.CampaignCancelled); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteCampaign(ctx, f.p1.ID, c.ID); err != nil {
			t.Fatal(err)
		}
		if calls, err := db.Calls(ctx, f.p1.ID, agentline.CallFilter{Limit: 10}); err != nil || len(calls) != 1 {
			t.Fatalf("the campaign's calls after its deletion: %+v %v", calls, err)
		}
		d := newCampaign(t, db, f.p1.ID, f.a1.ID, "Again")
		if _, _, _, err := db.AddContacts(ctx, f.p1.ID, d.ID, contacts("+14155550101"), 10); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteProject(ctx, f.p1.ID); err != nil {
			t.Fatal(err)
		}
	})
}

func mustExec(t *testing.T, db *store.DB, statement string) {
	t.Helper()
	if err := db.ExecAdmin(context.Background(), statement); err != nil {
		t.Fatalf("%s: %v", statement, err)
	}
}

// The do-not-call list is per project, pages by number, and marks the
// project's pending contacts of a number added to it.
func TestDoNotCall(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		c := newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
		if _, _, _, err := db.AddContacts(ctx, f.p1.ID, c.ID, contacts("+14155550101", "+14155550102"), 10); err != nil {
			t.Fatal(err)
		}
		e, created, err := db.AddDoNotCall(ctx, f.p1.ID, agentline.DoNotCall{PhoneNumber: "+14155550102", Reason: "asked on a call"})
		if err != nil || !created || e.Reason != "asked on a call" || e.CreatedAt.IsZero() {
			t.Fatalf("add = %+v %v %v", e, created, err)
		}
		again, created, err := db.AddDoNotCall(ctx, f.p1.ID, agentline.DoNotCall{PhoneNumber: "+14155550102", Reason: "other"})
		if err != nil || created || again.Reason != "asked on a call" || !again.CreatedAt.Equal(e.CreatedAt) {
			t.Fatalf("add again = %+v %v %v", again, created, err)
		}
		list, _ := db.CampaignContacts(ctx, f.p1.ID, c.ID, agentline.ContactDoNotCall, 0, 10)
		if len(list) != 1 || list[0].PhoneNumber != "+14155550102" || list[0].NextAttemptAt != nil {
			t.Fatalf("do_not_call contacts %+v", list)
		}
		for _, n := range []string{"+14155550109", "+442071234567"} {
			if _, _, err := db.AddDoNotCall(ctx, f.p1.ID, agentline.DoNotCall{PhoneNumber: n}); err != nil {
				t.Fatal(err)
			}
		}
		page, err := db.DoNotCallList(ctx, f.p1.ID, "", 2)
		if err != nil || len(page) != 2 || page[0].PhoneNumber != "+14155550102" || page[1].PhoneNumber != "+14155550109" {
			t.Fatalf("first page %+v %v", page, err)
		}
		if page, err = db.DoNotCallList(ctx, f.p1.ID, page[1].PhoneNumber, 2); err != nil || len(page) != 1 || page[0].PhoneNumber != "+442071234567" {
			t.Fatalf("second page %+v %v", page, err)
		}
		if page, _ := db.DoNotCallList(ctx, f.p2.ID, "", 10); len(page) != 0 {
			t.Fatalf("another project's list: %+v", page)
		}
		if on, err := db.OnDoNotCall(ctx, f.p1.ID, "+14155550109"); err != nil || !on {
			t.Fatalf("OnDoNotCall = %v %v", on, err)
		}
		if on, _ := db.OnDoNotCall(ctx, f.p2.ID, "+14155550109"); on {
			t.Fatal("on another project's list")
		}
		if err := db.DeleteDoNotCall(ctx, f.p2.ID, "+14155550109"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("delete from another project: %v", err)
		}
		if err := db.DeleteDoNotCall(ctx, f.p1.ID, "+14155550102"); err != nil {
			t.Fatal(err)
		}
		// Taking a number off the list calls nobody by surprise.
		if list, _ := db.CampaignContacts(ctx, f.p1.ID, c.ID, agentline.ContactDoNotCall, 0, 10); len(list) != 1 {
			t.Fatalf("after the delete: %+v", list)
		}
		if on, _ := db.OnDoNotCall(ctx, f.p1.ID, "+14155550102"); on {
			t.Fatal("still on the list")
		}
	})
}
