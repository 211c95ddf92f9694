package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// OptOutContact lists the contact's number (keeping an earlier listing's
// reason), makes the contact opted_out whatever its status, and the
// project's other pending contacts of that number do_not_call; another
// project's contact is not found, and its contacts are left alone.
func TestOptOutContact(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		const number = "+14155550101"
		renewals := newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
		survey := newCampaign(t, db, f.p1.ID, f.a1.ID, "Survey")
		elsewhere := newCampaign(t, db, f.p2.ID, f.a2.ID, "Elsewhere")
		for _, c := range []agentline.Campaign{renewals, survey, elsewhere} {
			if _, _, _, err := db.AddContacts(ctx, c.ProjectID, c.ID, contacts(number, "+14155550102"), 10); err != nil {
				t.Fatal(err)
			}
		}
		first := func(c agentline.Campaign) agentline.CampaignContact {
			list, err := db.CampaignContacts(ctx, c.ProjectID, c.ID, "", 0, 10)
			if err != nil || len(list) != 2 {
				t.Fatalf("contacts %+v %v", list, err)
			}
			return list[0]
		}
		ct := first(renewals)
		mustExec(t, db, fmt.Sprintf(`UPDATE campaign_contacts SET status = 'calling', next_attempt_at = NULL, attempts = 1 WHERE id = %d`, ct.ID))
		if _, err := db.OptOutContact(ctx, f.p2.ID, ct.ID, "opted out on a call"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's contact: %v", err)
		}
		listed, err := db.OptOutContact(ctx, f.p1.ID, ct.ID, "opted out on a call")
		if err != nil || listed.PhoneNumber != number || listed.Reason != "opted out on a call" {
			t.Fatalf("opt out: %+v %v", listed, err)
		}
		if got := first(renewals); got.Status != agentline.ContactOptedOut || got.NextAttemptAt != nil || got.Attempts != 1 {
			t.Fatalf("opted out contact %+v", got)
		}
		if got := first(survey); got.Status != agentline.ContactDoNotCall {
			t.Fatalf("the same number in another campaign: %+v", got)
		}
		if got := first(elsewhere); got.Status != agentline.ContactPending {
			t.Fatalf("another project's contact changed: %+v", got)
		}
		if on, _ := db.OnDoNotCall(ctx, f.p2.ID, number); on {
			t.Fatal("listed in another project")
		}
		// Opting out again keeps the listing as it was.
		if listed, err = db.OptOutContact(ctx, f.p1.ID, ct.ID, "another reason"); err != nil || listed.Reason != "opted out on a call" {
			t.Fatalf("again: %+v %v", listed, err)
		}
	})
}
