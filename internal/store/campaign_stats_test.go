package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// CampaignStats sums each campaign's dials in the range by outcome (an
// opt-out also by its call's end reason), the analyses of their
// conversations and the minutes of their calls; dials outside the range,
// and another project's, are not counted.
func TestCampaignStats(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		renewals := newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
		survey := newCampaign(t, db, f.p1.ID, f.a1.ID, "Survey")
		newCampaign(t, db, f.p1.ID, f.a1.ID, "Idle")
		elsewhere := newCampaign(t, db, f.p2.ID, f.a2.ID, "Elsewhere")
		n := 0
		// dial stores a contact of c with one dial at "at" with outcome,
		// and, when secs >= 0, its call lasting secs with end reason, and
		// an analysis when success is not nil.
		dial := func(c agentline.Campaign, agentID int64, at, outcome string, secs int, reason string, success *bool) {
			t.Helper()
			n++
			number := fmt.Sprintf("+1415555%04d", n)
			if _, _, _, err := db.AddContacts(ctx, c.ProjectID, c.ID, contacts(number), 100); err != nil {
				t.Fatal(err)
			}
			call := "NULL"
			if secs >= 0 {
				rec, err := db.ReserveCall(ctx, agentline.Call{ProjectID: c.ProjectID, AgentID: agentID, CallSID: fmt.Sprint("CAstat", n),
					Direction: agentline.CallOutbound, From: "+14155550100", To: number, Status: agentline.CallQueued}, 100)
				if err != nil {
					t.Fatal(err)
				}
				mustExec(t, db, fmt.Sprintf(`UPDATE calls SET status = 'completed', duration_s = %d, end_reason = '%s', campaign_id = %d WHERE id = %d`,
					secs, reason, c.ID, rec.ID))
				call = fmt.Sprint(rec.ID)
				if success != nil {
					mustExec(t, db, fmt.Sprintf(`INSERT INTO conversation_analyses (conversation_id, project_id, agent_id, status, summary, success, created_at, updated_at)
						VALUES ('call_%d', %d, %d, 'done', 's', %t, '%s', '%s')`, rec.ID, c.ProjectID, agentID, *success, at, at))
				}
			}
			mustExec(t, db, fmt.Sprintf(`INSERT INTO campaign_dials (campaign_id, contact_id, project_id, attempt, call_id, dialed_at, outcome)
				VALUES (%d, (SELECT id FROM campaign_contacts WHERE campaign_id = %d AND phone_number = '%s'), %d, 1, %s, '%s', '%s')`,
				c.ID, c.ID, number, c.ProjectID, call, at, outcome))
		}
		yes, no := true, false
		const in, out = "2024-06-03 14:00:00+00:00", "2024-05-01 14:00:00+00:00"
		dial(renewals, f.a1.ID, in, agentline.ContactCompleted, 90, "agent_hangup", &yes)
		dial(renewals, f.a1.ID, in, agentline.ContactCompleted, 30, "caller_hangup", &no)
		dial(renewals, f.a1.ID, in, agentline.ContactCompleted, 60, "caller_hangup", &yes)
		dial(renewals, f.a1.ID, in, agentline.ContactCompleted, 12, "caller_hangup", nil) // not analysed
		dial(renewals, f.a1.ID, in, agentline.ContactOptedOut, 18, "opted_out", nil)
		dial(renewals, f.a1.ID, in, agentline.ContactCompleted, 6, "opted_out", nil) // an opt-out the engine wrote as completed
		dial(renewals, f.a1.ID, in, agentline.ContactVoicemail, 24, "agent_hangup", nil)
		dial(renewals, f.a1.ID, in, agentline.ContactBusy, 0, "", nil)
		dial(renewals, f.a1.ID, in, agentline.ContactNoAnswer, 0, "", nil)
		dial(renewals, f.a1.ID, in, agentline.ContactFailed, -1, "", nil) // the carrier refused: no call
		dial(renewals, f.a1.ID, in, "", 0, "", nil)                       // still live
		dial(renewals, f.a1.ID, out, agentline.ContactCompleted, 600, "agent_hangup", &yes)
		dial(survey, f.a1.ID, in, agentline.ContactNoAnswer, 0, "", nil)
		dial(elsewhere, f.a2.ID, in, agentline.ContactCompleted, 60, "agent_hangup", &yes)

		from := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
		stats, err := db.CampaignStats(ctx, f.p1.ID, from, from.AddDate(0, 0, 30))
		if err != nil {
			t.Fatal(err)
		}
		if len(stats) != 2 || stats[0].CampaignID != renewals.ID || stats[1].CampaignID != survey.ID {
			t.Fatalf("stats %+v", stats)
		}
		r := stats[0]
		rate := 2.0 / 3
		want := agentline.CampaignStat{CampaignID: renewals.ID, Name: "Renewals", Dialed: 11, Answered: 6, Voicemail: 1, Busy: 1, NoAnswer: 1,
			Failed: 1, OptedOut: 2, Evaluated: 3, Successes: 2, SuccessRate: &rate, Minutes: 4}
		if r.SuccessRate == nil || *r.SuccessRate != rate {
			t.Fatalf("success rate %v", r.SuccessRate)
		}
		r.SuccessRate = &rate
		if r != want {
			t.Fatalf("renewals\n got %+v\nwant %+v", r, want)
		}
		if s := stats[1]; s.Name != "Survey" || s.Dialed != 1 || s.NoAnswer != 1 || s.SuccessRate != nil || s.Minutes != 0 {
			t.Fatalf("survey %+v", s)
		}
		if stats, err := db.CampaignStats(ctx, f.p2.ID, from.AddDate(-1, 0, 0), from); err != nil || len(stats) != 0 {
			t.Fatalf("an empty range: %+v %v", stats, err)
		}
	})
}
