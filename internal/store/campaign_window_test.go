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

// A change of a campaign's window is checked, in its transaction, against
// the contacts still to be called (pending or calling), and undone whole
// when the check refuses it; contacts checked against a window that is no
// longer the campaign's are refused whole (409), so an upload racing a
// PATCH cannot store contacts the new window never opens for.
func TestCampaignWindowChecks(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		c := newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
		old := c.CallingWindow
		if _, _, _, err := db.AddContactsChecked(ctx, f.p1.ID, c.ID, &old, contacts("+18005550100", "+12125550101"), 100); err != nil {
			t.Fatal(err)
		}
		narrowed := c
		narrowed.CallingWindow = agentline.CallingWindow{Days: []string{"mon"}, Start: "10:00", End: "11:00"}
		narrowed.MaxAttempts = 7
		var seen []string
		refuse := errors.New("refused")
		_, err := db.UpdateCampaignChecked(ctx, narrowed, func(waiting []agentline.CampaignContact) error {
			for _, ct := range waiting {
				seen = append(seen, ct.PhoneNumber)
			}
			return refuse
		})
		if !errors.Is(err, refuse) || !slices.Equal(seen, []string{"+18005550100", "+12125550101"}) {
			t.Fatalf("check saw %v, answered %v", seen, err)
		}
		if got, _ := db.Campaign(ctx, f.p1.ID, c.ID); !got.CallingWindow.Equal(old) || got.MaxAttempts != c.MaxAttempts {
			t.Fatalf("a refused change was kept: %+v", got)
		}
		if _, err := db.UpdateCampaignChecked(ctx, narrowed, func([]agentline.CampaignContact) error { return nil }); err != nil {
			t.Fatal(err)
		}
		// An upload checked against the old window comes after the change.
		_, _, _, err = db.AddContactsChecked(ctx, f.p1.ID, c.ID, &old, contacts("+18885550102"), 100)
		if agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("upload checked against the old window: %v", err)
		}
		if got, _ := db.Campaign(ctx, f.p1.ID, c.ID); got.Counts.Total != 2 {
			t.Fatalf("counts %+v", got.Counts)
		}
		if _, _, _, err := db.AddContactsChecked(ctx, f.p1.ID, c.ID, &narrowed.CallingWindow, contacts("+18885550102"), 100); err != nil {
			t.Fatal(err)
		}
	})
}
