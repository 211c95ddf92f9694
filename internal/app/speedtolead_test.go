package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// Speed to lead over HTTP: a lead-capture form names a campaign of its
// project (settings.form.campaign_id; another project's, a live chat form,
// or a form without a phone field is a 400 naming the field), and each
// submission with a number in its tel field becomes a contact of that
// campaign, pending and due at once, with the answers as variables and the
// form as consent; a number that cannot be called is stored as a lead
// only, a listed one as a do_not_call contact. On SQLite and PostgreSQL.
func TestFormLeadBecomesCampaignContact(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testFormLeadBecomesCampaignContact(t, d)
		})
	}
}

func testFormLeadBecomesCampaignContact(t *testing.T, d store.Dialect) {
	s := apptest.StartFresh(t, d, nil)
	ctx := context.Background()
	db := s.App.Store
	_, tok := s.NewUser(t, "owner@example.com")
	var p, other agentline.Project
	var agent, otherAgent agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Other"}, &other)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Caller"}, &agent)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(other.ID)+"/agents", tok, map[string]string{"name": "Elsewhere"}, &otherAgent)
	campaign := func(projectID, agentID int64) agentline.Campaign {
		c, err := db.CreateCampaign(ctx, agentline.Campaign{ProjectID: projectID, AgentID: agentID, Name: "Leads",
			CallingWindow:      agentline.CallingWindow{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "20:00"},
			MaxConcurrentCalls: 1, CallsPerSecond: 1, MaxAttempts: 3, RetryAfter: time.Hour, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	leads, stranger := campaign(p.ID, agent.ID), campaign(other.ID, otherAgent.ID)
	fields := []map[string]any{{"name": "name", "label": "Name", "type": "text", "required": true},
		{"name": "mobile", "label": "Phone", "type": "tel"}}
	form := func(extra map[string]any) map[string]any {
		f := map[string]any{"mode": "lead_capture", "fields": fields}
		for k, v := range extra {
			f[k] = v
		}
		return map[string]any{"type": "form", "name": "Call me", "settings": map[string]any{"form": f}}
	}
	pp := "/api/projects/" + itoa(p.ID) + "/channels"
	for _, bad := range []map[string]any{
		form(map[string]any{"campaign_id": stranger.ID}),
		form(map[string]any{"campaign_id": 0}),
		form(map[string]any{"campaign_id": leads.ID, "mode": "live_chat"}),
		form(map[string]any{"campaign_id": leads.ID, "fields": fields[:1]}),
	} {
		r := s.Do(t, "POST", pp, tok, bad)
		var e struct{ Error struct{ Field string } }
		r.JSON(t, &e)
		if r.Status != 400 || e.Error.Field != "settings.form.campaign_id" {
			t.Fatalf("%v: %s", bad, r)
		}
	}
	var ch agentline.Channel
	s.Must(t, 201, "POST", pp, tok, form(nil), &ch)
	s.Must(t, 200, "PATCH", "/api/channels/"+itoa(ch.ID), tok, map[string]any{"settings": map[string]any{"form": map[string]any{"campaign_id": leads.ID}}}, &ch)
	if ch.Settings.Form.CampaignID == nil || *ch.Settings.Form.CampaignID != leads.ID {
		t.Fatalf("channel %+v", ch.Settings.Form)
	}
	if _, _, err := db.AddDoNotCall(ctx, p.ID, agentline.DoNotCall{PhoneNumber: "+14155550109", Reason: "asked"}); err != nil {
		t.Fatal(err)
	}

	submit := func(name, phone string) agentline.Lead {
		var ans struct {
			LeadID int64 `json:"lead_id"`
		}
		s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(ch.ID), "", map[string]string{"name": name, "mobile": phone}, &ans)
		var l agentline.Lead
		s.Must(t, 200, "GET", "/api/leads/"+itoa(ans.LeadID), tok, nil, &l)
		return l
	}
	ada := submit("Ada", "+1 (415) 555-0101")
	submit("Bo", "415 555 0102") // not in international form: a lead only
	submit("Cy", "")             // no number: a lead only
	submit("Di", "+14155550109") // on the do-not-call list
	submit("Ada again", "+14155550101")
	list, err := db.CampaignContacts(ctx, p.ID, leads.ID, "", 0, 10)
	if err != nil || len(list) != 2 {
		t.Fatalf("contacts %+v %v", list, err)
	}
	c := list[0]
	if c.PhoneNumber != "+14155550101" || c.Status != agentline.ContactPending || c.NextAttemptAt == nil || c.NextAttemptAt.After(time.Now()) ||
		c.Variables["name"] != "Ada" || c.Variables["mobile"] != "+1 (415) 555-0101" || c.Consent == nil ||
		c.Consent.Source != "form:"+itoa(ch.ID) || !c.Consent.At.Equal(ada.CreatedAt) {
		t.Fatalf("contact %+v consent %+v, lead at %v", c, c.Consent, ada.CreatedAt)
	}
	if list[1].PhoneNumber != "+14155550109" || list[1].Status != agentline.ContactDoNotCall {
		t.Fatalf("listed contact %+v", list[1])
	}
	var page struct{ Leads []agentline.Lead }
	if s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/leads", tok, nil, &page); len(page.Leads) != 5 {
		t.Fatalf("%d leads, want 5", len(page.Leads))
	}
	// null takes the campaign off the form; its later leads are not called.
	var off agentline.Channel
	s.Must(t, 200, "PATCH", "/api/channels/"+itoa(ch.ID), tok, map[string]any{"settings": map[string]any{"form": map[string]any{"campaign_id": nil}}}, &off)
	submit("Ed", "+14155550105")
	if got, _ := db.Campaign(ctx, p.ID, leads.ID); off.Settings.Form.CampaignID != nil || got.Counts.Total != 2 {
		t.Fatalf("after taking the campaign off: %+v, %+v", off.Settings.Form, got.Counts)
	}
}
