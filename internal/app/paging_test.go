package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/listing"
)

// pagedList is one list endpoint: its path, the field of its body that
// holds the items ("" for a bare array, whose next cursor travels in
// X-Next-Cursor) and the field that identifies an item.
type pagedList struct {
	path, items, key string
}

// Every list endpoint pages with limit and cursor: walking a list of more
// items than limit, two at a time, gives every item once, in the order of
// the whole list; a malformed cursor is 400 naming cursor.
func TestEveryListPagesByCursor(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		// The seeded widget sessions started an hour ago and hear nothing
		// after: with the default idle timeout the recurring sweep (every
		// 30 s) abandons them whenever it next runs, and each one's
		// conversation.ended deliveries, made during a walk of the
		// deliveries' list, would fail the walk although the paging is right.
		s := apptest.Start(t, apptest.Config(t, databaseURL, map[string]string{"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test",
			"AGENTLINE_SESSION_IDLE_TIMEOUT": "24h"}))
		admin := s.Admin(t)
		lists, tok := seedLists(t, s, admin)
		for _, l := range lists {
			t.Run(l.path, func(t *testing.T) {
				token := tok
				if strings.HasPrefix(l.path, "/api/admin/") {
					token = admin
				}
				whole, _ := listPage(t, s, token, l, "")
				if len(whole) <= 2 {
					t.Fatalf("only %d items: the walk below would prove nothing", len(whole))
				}
				var walked []string
				cursor := ""
				for pages := 0; ; pages++ {
					if pages > len(whole) {
						t.Fatalf("no end after %d pages: %v", pages, walked)
					}
					page, next := listPage(t, s, token, l, "limit=2&cursor="+url.QueryEscape(cursor))
					if len(page) > 2 {
						t.Fatalf("a page of %d items with limit 2", len(page))
					}
					walked = append(walked, page...)
					if next == "" {
						break
					}
					cursor = next
				}
				if !slices.Equal(walked, whole) {
					t.Errorf("walked %v, want %v", walked, whole)
				}
				sep := "?"
				if strings.Contains(l.path, "?") {
					sep = "&"
				}
				r := s.Do(t, "GET", l.path+sep+"cursor=not*a*cursor", token, nil)
				var e struct{ Error agentline.Error }
				if json.Unmarshal(r.Body, &e); r.Status != 400 || e.Error.Field != "cursor" {
					t.Errorf("malformed cursor = %s, want 400 naming cursor", r)
				}
			})
		}
	})
}

// listPage gets one page of l with the query and returns the keys of its
// items and the next cursor ("" on the last page).
func listPage(t *testing.T, s *apptest.Server, token string, l pagedList, query string) ([]string, string) {
	t.Helper()
	path := l.path
	if query != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + query
	}
	r := s.Must(t, 200, "GET", path, token, nil, nil)
	var items []map[string]json.RawMessage
	next := r.Header.Get(listing.NextCursorHeader)
	if l.items == "" {
		r.JSON(t, &items)
	} else {
		var body map[string]json.RawMessage
		r.JSON(t, &body)
		if err := json.Unmarshal(body[l.items], &items); err != nil {
			t.Fatalf("%s: %v", l.items, err)
		}
		if c, ok := body["next_cursor"]; !ok {
			t.Fatalf("no next_cursor in %s", r)
		} else if string(c) != "null" {
			json.Unmarshal(c, &next)
		}
	}
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = string(it[l.key])
	}
	return keys, next
}

// seedLists makes three or more items of every list for a new owner, and
// returns the lists with the owner's token.
func seedLists(t *testing.T, s *apptest.Server, admin string) ([]pagedList, string) {
	t.Helper()
	ctx := context.Background()
	db := s.App.Store
	owner, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	for _, name := range []string{"A", "B", "C"} {
		s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": name}, &p)
	}
	pp := fmt.Sprintf("/api/projects/%d", p.ID)
	for _, email := range []string{"m1@example.com", "m2@example.com"} {
		_, mt := s.NewUser(t, email)
		s.Join(t, tok, p.ID, mt, email, agentline.RoleViewer)
	}
	var agent agentline.Agent
	for _, name := range []string{"Ada", "Bea", "Cy"} {
		s.Must(t, 201, "POST", pp+"/agents", tok, map[string]string{"name": name}, &agent)
	}
	var ch agentline.Channel
	for i := range 3 {
		var err error
		ch, err = db.CreateChannel(ctx, agentline.Channel{ProjectID: p.ID, AgentID: &agent.ID, Type: agentline.ChannelVoiceWidget, Name: fmt.Sprint("web", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateTool(ctx, agentline.WebhookTool{ProjectID: p.ID, AgentID: agent.ID, Name: fmt.Sprint("tool", i),
			URL: "https://tools.example.com/t", Method: "POST", Parameters: json.RawMessage(`{"type":"object"}`)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateKnowledgeDocument(ctx, agentline.KnowledgeDocument{ProjectID: p.ID, AgentID: agent.ID, Title: fmt.Sprint("doc", i),
			ContentType: "text/plain"}, "en", []string{"text"}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateInvite(ctx, agentline.Invite{ProjectID: p.ID, Kind: agentline.InviteJoin, Email: fmt.Sprintf("i%d@example.com", i), Role: agentline.RoleViewer,
			ExpiresAt: time.Now().Add(time.Hour)}, fmt.Sprint("hash", i), owner.ID, false); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: fmt.Sprintf("+1415555010%d", i),
			Status: agentline.NumberUnassigned, CarrierSID: fmt.Sprint("PN", i)}); err != nil {
			t.Fatal(err)
		}
		// On loopback, which deliveries refuse to dial: nothing leaves.
		storeEndpoint(t, s, p.ID, fmt.Sprintf("https://127.0.0.1:9/%d", i))
		// Each save of new instructions is a version of the agent.
		s.Must(t, 200, "PATCH", fmt.Sprintf("/api/agents/%d", agent.ID), tok, map[string]string{"instructions": fmt.Sprint("v", i)}, nil)
	}
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	for i := range 4 {
		// Two at the same time: the cursor's id breaks the tie.
		at := t0.Add(time.Duration(i/2) * time.Minute)
		if _, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: fmt.Sprint("ses_page", i), ProjectID: p.ID, ChannelID: ch.ID,
			AgentID: agent.ID, Provider: agentline.ProviderOpenAI, Model: "gpt-realtime", StartedAt: at}, conversation.Started); err != nil {
			t.Fatal(err)
		}
		lead, err := db.CreateLead(ctx, agentline.Lead{ProjectID: p.ID, ChannelID: ch.ID, Mode: agentline.FormLeadCapture,
			Answers: map[string]any{"name": "Grace"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.RecordNotifyAttempt(ctx, agentline.NotifyAttempt{ProjectID: p.ID, LeadID: lead.ID, Attempt: 1, MaxAttempts: 5,
			StatusCode: 500, Error: "HTTP 500", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	var callID int64
	for i := range 3 {
		c, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: agent.ID, CallSID: fmt.Sprint("CA", i), Direction: agentline.CallOutbound,
			From: "+14155550100", To: "+14155550199", Status: agentline.CallQueued}, 10)
		if err != nil {
			t.Fatal(err)
		}
		callID = c.ID
		for _, st := range []string{agentline.CallRinging, agentline.CallInProgress} {
			if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: c.CallSID, Status: st}, conversation.CallChanged); err != nil {
				t.Fatal(err)
			}
		}
	}
	var camp agentline.Campaign
	for i := range 3 {
		var err error
		if camp, err = db.CreateCampaign(ctx, agentline.Campaign{ProjectID: p.ID, AgentID: agent.ID, Name: fmt.Sprint("campaign", i),
			MaxConcurrentCalls: 1, CallsPerSecond: 1, MaxAttempts: 3, RetryAfter: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.AddDoNotCall(ctx, p.ID, agentline.DoNotCall{PhoneNumber: fmt.Sprintf("+1415555020%d", i)}); err != nil {
			t.Fatal(err)
		}
		s.Must(t, 201, "POST", pp+"/api-keys", tok, map[string]string{"name": fmt.Sprint("key", i), "role": "viewer"}, nil)
	}
	if _, _, _, err := db.AddContacts(ctx, p.ID, camp.ID, []agentline.CampaignContact{{PhoneNumber: "+14155550301"},
		{PhoneNumber: "+14155550302"}, {PhoneNumber: "+14155550303"}, {PhoneNumber: "+14155550304"}}, 100); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		sc, err := db.CreateTestScenario(ctx, agentline.TestScenario{ProjectID: p.ID, AgentID: agent.ID, Name: fmt.Sprint("scenario", i),
			Persona: "A customer", Goal: "Ask", SuccessCriteria: "Answered", MaxTurns: 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateTestRun(ctx, p.ID, agent.ID, nil, []int64{sc.ID}); err != nil {
			t.Fatal(err)
		}
	}
	hooks := s.Must(t, 200, "GET", pp+"/webhooks", tok, nil, nil)
	var eps struct{ Webhooks []agentline.WebhookEndpoint }
	hooks.JSON(t, &eps)
	settleTestRunDeliveries(t, s, tok, eps.Webhooks[0].ID, 3)
	return []pagedList{
		{"/api/projects", "", "id"},
		{"/api/admin/users", "", "id"},
		{pp + "/members", "", "user_id"},
		{pp + "/invites", "", "id"},
		{pp + "/agents", "", "id"},
		{fmt.Sprintf("/api/agents/%d/tools", agent.ID), "", "id"},
		{fmt.Sprintf("/api/agents/%d/knowledge", agent.ID), "", "id"},
		{fmt.Sprintf("/api/agents/%d/versions", agent.ID), "versions", "version"},
		{pp + "/channels", "", "id"},
		{pp + "/telephony/numbers", "", "id"},
		{pp + "/webhooks", "webhooks", "id"},
		{fmt.Sprintf("/api/webhooks/%d/deliveries", eps.Webhooks[0].ID), "deliveries", "id"},
		{pp + "/sessions", "sessions", "id"},
		{pp + "/leads", "leads", "id"},
		{fmt.Sprintf("/api/channels/%d/notify-attempts", ch.ID), "attempts", "id"},
		{pp + "/telephony/calls", "items", "id"},
		{pp + "/conversations", "conversations", "id"},
		{fmt.Sprintf("/api/conversations/%s/deliveries", agentline.CallConversationID(callID)), "deliveries", "id"},
		{pp + "/campaigns", "campaigns", "id"},
		{fmt.Sprintf("/api/campaigns/%d/contacts", camp.ID), "contacts", "id"},
		{fmt.Sprintf("/api/campaigns/%d/contacts?status=pending", camp.ID), "contacts", "id"},
		{pp + "/dnc", "items", "phone_number"},
		{fmt.Sprintf("/api/agents/%d/scenarios", agent.ID), "", "id"},
		{fmt.Sprintf("/api/agents/%d/test-runs", agent.ID), "test_runs", "id"},
		{pp + "/api-keys", "", "id"},
		{pp + "/audit-log", "entries", "id"},
		{pp + "/audit-log?action=api_key.create", "entries", "id"},
		{"/api/admin/audit-log", "entries", "id"},
	}, tok
}

// settleTestRunDeliveries waits (at most 30 s) until the webhook holds the
// test_run.completed deliveries of the seeded test runs, which the app
// plays in the background: a delivery made during a walk of the list would
// fail the walk although the paging is right.
func settleTestRunDeliveries(t *testing.T, s *apptest.Server, tok string, webhookID int64, runs int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var page struct{ Deliveries []agentline.WebhookDelivery }
		s.Must(t, 200, "GET", fmt.Sprintf("/api/webhooks/%d/deliveries?limit=100", webhookID), tok, nil, &page)
		n := 0
		for _, d := range page.Deliveries {
			if d.EventType == agentline.EventTestRunCompleted {
				n++
			}
		}
		if n >= runs {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d test runs' deliveries after 30 s: %+v", n, runs, page.Deliveries)
		}
	}
}
