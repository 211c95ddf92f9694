package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// A PATCH of a campaign's window that would never open, in all their zones
// at once, for contacts still to be called (here a toll-free +1 number with
// no timezone, which maps to every zone from Guam to Newfoundland) is
// refused with a 400 naming calling_window, how many and one of them,
// whatever the campaign's status before it is over; the campaign keeps
// its window. A window that opens for them, or any window once they are
// no longer to be called, is taken. Nobody is left waiting forever.
func TestNarrowedWindowCannotStrandContacts(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, nil))
		c := newCampaignSetup(t, s)
		everyDay := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
		camp := c.create(t, map[string]any{"name": "Toll-free", "agent_id": c.agent.ID,
			"calling_window": map[string]any{"days": everyDay, "start": "00:00", "end": "24:00"}})
		one := "/api/campaigns/" + itoa(camp.ID)
		var up struct{ Added int }
		s.Must(t, 200, "POST", one+"/contacts", c.tok, []map[string]any{
			{"phone_number": "+18005550100"}, {"phone_number": "+18885550101"},
			{"phone_number": "+12125550102"}, {"phone_number": "+18005550103", "timezone": "America/Chicago"}}, &up)
		if up.Added != 4 {
			t.Fatalf("added %d", up.Added)
		}
		narrow := map[string]any{"calling_window": map[string]any{"start": "09:00", "end": "17:00"}}
		refused := func(status string) {
			t.Helper()
			var before campaignJSON
			s.Must(t, 200, "GET", one, c.tok, nil, &before)
			r := s.Do(t, "PATCH", one, c.tok, narrow)
			var e struct{ Error agentline.Error }
			r.JSON(t, &e)
			if r.Status != 400 || e.Error.Field != "calling_window" || !strings.Contains(e.Error.Message, " 2 contact(s)") ||
				!strings.Contains(e.Error.Message, "+18005550100") {
				t.Fatalf("%s: narrowing PATCH = %s", status, r)
			}
			var got campaignJSON
			s.Must(t, 200, "GET", one, c.tok, nil, &got)
			if !got.CallingWindow.Equal(before.CallingWindow) || got.MaxAttempts != before.MaxAttempts || got.Status != status {
				t.Fatalf("%s: the refused PATCH changed the campaign: %+v", status, got)
			}
		}
		refused(agentline.CampaignDraft)
		// Weekdays 09:00-20:00 opens in all +1 zones from 23:00 to 23:30
		// UTC: taken. Other fields of a refused PATCH change nothing either.
		s.Must(t, 200, "PATCH", one, c.tok, map[string]any{"calling_window": map[string]any{"days": everyDay[:5], "start": "09:00", "end": "20:00"}}, &camp)
		narrow["max_attempts"] = 5
		refused(agentline.CampaignDraft)
		// Running (with no carrier it dials nobody) or paused, the same.
		if _, err := s.App.Store.CreatePhoneNumber(context.Background(), agentline.PhoneNumber{ProjectID: c.project.ID, AgentID: &camp.AgentID,
			PhoneNumber: "+14155550142", Status: agentline.NumberActive, CarrierSID: "PNcamp"}); err != nil {
			t.Fatal(err)
		}
		s.Must(t, 200, "POST", one+"/start", c.tok, nil, nil)
		refused(agentline.CampaignRunning)
		s.Must(t, 200, "POST", one+"/pause", c.tok, nil, nil)
		refused(agentline.CampaignPaused)
		// Cancelled, nobody is to be called: any window is taken.
		s.Must(t, 200, "POST", one+"/cancel", c.tok, nil, nil)
		s.Must(t, 200, "PATCH", one, c.tok, narrow, &camp)
		if camp.CallingWindow.Start != "09:00" || camp.CallingWindow.End != "17:00" {
			t.Fatalf("cancelled campaign's PATCH: %+v", camp)
		}
	})
}
