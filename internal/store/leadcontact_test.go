package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A lead's follow-up adds its contact in the lead's transaction: pending
// and due now with its consent, do_not_call for a listed number, nothing
// for a number the campaign has. A cancelled campaign or another
// project's is refused without failing the transaction, so the lead is
// stored (PostgreSQL aborts a transaction whose statement failed); a
// completed campaign runs again for its new contact.
func TestAddLeadContact(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		// Starting a campaign, and a lead of a running one, wake its engine.
		var woken int
		db.SetOutbox(store.OutboxOptions{Enqueue: func(_ context.Context, _ *sql.Tx, js []agentline.Job) error {
			for _, j := range js {
				if _, ok := j.(agentline.DialCampaign); ok {
					woken++
				}
			}
			return nil
		}})
		f := newWidgetFixture(t, db)
		c := newCampaign(t, db, f.p1.ID, f.a1.ID, "Leads")
		elsewhere := newCampaign(t, db, f.p2.ID, f.a2.ID, "Elsewhere")
		if _, _, err := db.AddDoNotCall(ctx, f.p1.ID, agentline.DoNotCall{PhoneNumber: "+14155550109", Reason: "asked"}); err != nil {
			t.Fatal(err)
		}
		// lead stores a lead whose follow-up adds number to campaign, and
		// returns what AddLeadContact answered.
		lead := func(campaignID int64, number string) (string, error) {
			t.Helper()
			var status string
			var addErr error
			before, _ := db.Leads(ctx, f.p1.ID, agentline.SessionFilter{Limit: 100})
			_, err := db.CreateLeadThen(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLeadCapture,
				Answers: map[string]any{"phone": number}}, nil, func(ctx context.Context, l agentline.Lead, out agentline.Outbox) error {
				tx, ok := out.(agentline.LeadTx)
				if !ok {
					return errors.New("the outbox is no LeadTx")
				}
				status, addErr = tx.AddLeadContact(ctx, f.p1.ID, campaignID, agentline.CampaignContact{PhoneNumber: number,
					Variables: map[string]string{"phone": number}, Consent: &agentline.ContactConsent{Source: "form:1", At: l.CreatedAt}})
				return nil
			})
			after, _ := db.Leads(ctx, f.p1.ID, agentline.SessionFilter{Limit: 100})
			if err != nil || len(after) != len(before)+1 {
				t.Fatalf("the lead was not stored: %v", err)
			}
			return status, addErr
		}
		start := time.Now().UTC().Add(-time.Second)
		if st, err := lead(c.ID, "+14155550101"); err != nil || st != agentline.ContactPending {
			t.Fatalf("new number: %q %v", st, err)
		}
		if st, err := lead(c.ID, "+14155550101"); err != nil || st != "" {
			t.Fatalf("the same number again: %q %v", st, err)
		}
		if st, err := lead(c.ID, "+14155550109"); err != nil || st != agentline.ContactDoNotCall {
			t.Fatalf("a listed number: %q %v", st, err)
		}
		if _, err := lead(elsewhere.ID, "+14155550102"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's campaign: %v", err)
		}
		list, err := db.CampaignContacts(ctx, f.p1.ID, c.ID, "", 0, 10)
		if err != nil || len(list) != 2 {
			t.Fatalf("contacts %+v %v", list, err)
		}
		got := list[0]
		if got.PhoneNumber != "+14155550101" || got.Status != agentline.ContactPending || got.NextAttemptAt == nil ||
			got.NextAttemptAt.Before(start) || got.Consent == nil || got.Consent.Source != "form:1" || got.Consent.At.Before(start) ||
			got.Variables["phone"] != "+14155550101" {
			t.Fatalf("contact %+v", got)
		}
		// A completed campaign runs again for a new contact; a cancelled
		// one takes none.
		if _, ok, err := db.TransitionCampaign(ctx, f.p1.ID, c.ID, []string{agentline.CampaignDraft}, agentline.CampaignRunning); err != nil || !ok {
			t.Fatal(err)
		}
		if _, ok, err := db.TransitionCampaign(ctx, f.p1.ID, c.ID, []string{agentline.CampaignRunning}, agentline.CampaignCompleted); err != nil || !ok {
			t.Fatal(err)
		}
		if st, err := lead(c.ID, "+14155550103"); err != nil || st != agentline.ContactPending {
			t.Fatalf("completed campaign: %q %v", st, err)
		}
		if got, _ := db.Campaign(ctx, f.p1.ID, c.ID); got.Status != agentline.CampaignRunning || got.FinishedAt != nil || got.StartedAt == nil {
			t.Fatalf("the completed campaign did not run again: %+v", got)
		}
		if woken != 2 { // the start, then the lead that ran it again
			t.Errorf("the engine was woken %d times, want 2", woken)
		}
		if _, ok, err := db.TransitionCampaign(ctx, f.p1.ID, c.ID, []string{agentline.CampaignRunning}, agentline.CampaignCancelled); err != nil || !ok {
			t.Fatal(err)
		}
		if _, err := lead(c.ID, "+14155550104"); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("cancelled campaign: %v", err)
		}
		if got, _ := db.Campaign(ctx, f.p1.ID, c.ID); got.Counts.Total != 3 || got.Status != agentline.CampaignCancelled {
			t.Fatalf("campaign %+v", got)
		}
	})
}

// A webhook consumer sees a campaign that a form's lead reopens start
// again before it completes again: started, completed, started (with
// reopened set, and the new contact counted), completed; never two
// completions in a row.
func TestReopenedCampaignStartsAgain(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newEngineFixture(t, db) // started, with nobody to call
		if _, err := db.FinishDialPass(ctx, f.p1.ID, f.c.ID, time.Now(), false, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateLeadThen(ctx, agentline.Lead{ProjectID: f.p1.ID, ChannelID: f.c1.ID, Mode: agentline.FormLeadCapture,
			Answers: map[string]any{"phone": "+14155550101"}}, nil, func(ctx context.Context, l agentline.Lead, out agentline.Outbox) error {
			_, err := out.(agentline.LeadTx).AddLeadContact(ctx, f.p1.ID, f.c.ID, agentline.CampaignContact{PhoneNumber: "+14155550101"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// Its contact asks not to be called: nobody is left, done again.
		if _, _, err := db.AddDoNotCall(ctx, f.p1.ID, agentline.DoNotCall{PhoneNumber: "+14155550101", Reason: "asked"}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FinishDialPass(ctx, f.p1.ID, f.c.ID, time.Now(), false, nil); err != nil {
			t.Fatal(err)
		}
		ds, err := db.WebhookDeliveries(ctx, f.p1.ID, f.hook.ID, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range slices.Backward(ds) {
			full, _, err := db.PendingDelivery(ctx, d.ID)
			if err != nil {
				t.Fatal(err)
			}
			var ev struct {
				Data agentline.CampaignEventData `json:"data"`
			}
			if err := json.Unmarshal(full.Body, &ev); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s reopened=%v total=%d %s", d.EventType, ev.Data.Reopened, ev.Data.Campaign.Counts.Total, ev.Data.Campaign.Status))
		}
		want := []string{"campaign.started reopened=false total=0 running", "campaign.completed reopened=false total=0 completed",
			"campaign.started reopened=true total=1 running", "campaign.completed reopened=false total=1 completed"}
		if !slices.Equal(got, want) {
			t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
