package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
)

// GET /api/projects/{id}/analytics answers campaigns: per campaign, the
// dials in the range and what they came to, from calls recorded through
// the store's status path (a person who answered and whose conversation
// the analysis judged a success, one who opted out on the call, a
// voicemail, a busy line). Another project's campaign is not in it.
func TestAnalyticsPerCampaign(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, nil)
	ctx := context.Background()
	db := s.App.Store
	_, tok := s.NewUser(t, "owner@example.com")
	var p, other agentline.Project
	var agent, otherAgent agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Other"}, &other)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Caller"}, &agent)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(other.ID)+"/agents", tok, map[string]string{"name": "Elsewhere"}, &otherAgent)
	newCampaign := func(projectID, agentID int64, name string) agentline.Campaign {
		c, err := db.CreateCampaign(ctx, agentline.Campaign{ProjectID: projectID, AgentID: agentID, Name: name,
			CallingWindow:      agentline.CallingWindow{Days: []string{"mon"}, Start: "09:00", End: "20:00"},
			MaxConcurrentCalls: 1, CallsPerSecond: 1, MaxAttempts: 3, RetryAfter: time.Hour, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	renewals, elsewhere := newCampaign(p.ID, agent.ID, "Renewals"), newCampaign(other.ID, otherAgent.ID, "Elsewhere")
	n := 0
	// dial records a call of c's agent to a new contact, with its dial
	// (as the engine writes them), ending with status, secs and reason.
	dial := func(c agentline.Campaign, agentID int64, outcome, status string, secs int, reason string) int64 {
		n++
		number := fmt.Sprintf("+1415555%04d", n)
		if _, _, _, err := db.AddContacts(ctx, c.ProjectID, c.ID, []agentline.CampaignContact{{PhoneNumber: number}}, 100); err != nil {
			t.Fatal(err)
		}
		sid := fmt.Sprintf("CA%032d", n)
		call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: c.ProjectID, AgentID: agentID, CallSID: sid, Direction: agentline.CallOutbound,
			From: "+14155550100", To: number, Status: agentline.CallQueued}, 100)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.ExecAdmin(ctx, fmt.Sprintf(`INSERT INTO campaign_dials (campaign_id, contact_id, project_id, attempt, call_id, dialed_at, outcome)
			VALUES (%d, (SELECT id FROM campaign_contacts WHERE campaign_id = %d AND phone_number = '%s'), %d, 1, %d, '%s', '%s')`,
			c.ID, c.ID, number, c.ProjectID, call.ID, time.Now().UTC().Format("2006-01-02 15:04:05.999999999-07:00"), outcome)); err != nil {
			t.Fatal(err)
		}
		e := agentline.CallEvent{CallSID: sid, Status: status, EndReason: reason}
		if secs > 0 {
			e.DurationS = &secs
		}
		if _, err := db.ApplyCallEvent(ctx, e, conversation.CallChanged); err != nil {
			t.Fatal(err)
		}
		return call.ID
	}
	won := dial(renewals, agent.ID, agentline.ContactCompleted, agentline.CallCompleted, 90, "agent_hangup")
	dial(renewals, agent.ID, agentline.ContactOptedOut, agentline.CallCompleted, 30, "opted_out")
	dial(renewals, agent.ID, agentline.ContactVoicemail, agentline.CallCompleted, 15, "agent_hangup")
	dial(renewals, agent.ID, agentline.ContactBusy, agentline.CallBusy, 0, "")
	dial(elsewhere, otherAgent.ID, agentline.ContactCompleted, agentline.CallCompleted, 60, "agent_hangup")
	// The analysis the call's end started (pending) has found success.
	if err := db.ExecAdmin(ctx, fmt.Sprintf(`UPDATE conversation_analyses SET status = 'done', summary = 'Renewed', success = TRUE
		WHERE conversation_id = 'call_%d'`, won)); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Campaigns []agentline.CampaignStat `json:"campaigns"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/analytics", tok, nil, &res)
	if len(res.Campaigns) != 1 {
		t.Fatalf("campaigns %+v", res.Campaigns)
	}
	c := res.Campaigns[0]
	if c.CampaignID != renewals.ID || c.Name != "Renewals" || c.Dialed != 4 || c.Answered != 2 || c.Voicemail != 1 || c.Busy != 1 ||
		c.NoAnswer != 0 || c.OptedOut != 1 || c.Evaluated != 1 || c.Successes != 1 || c.SuccessRate == nil || *c.SuccessRate != 1 || c.Minutes != 2.25 {
		t.Fatalf("renewals %+v", c)
	}
	// A range before the dials has none.
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/analytics?from=2024-01-01&to=2024-02-01", tok, nil, &res)
	if res.Campaigns == nil || len(res.Campaigns) != 0 {
		t.Fatalf("an empty range: %+v", res.Campaigns)
	}
}
