package app_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
)

// A conversation's webhook deliveries through the wired app: a call's
// started and ended events to the project's endpoint, with its URL; another
// tenant gets 404. And the catalog the console's pickers and webhooks page
// read.
func TestConversationDeliveriesAndCatalog(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, nil)
	ctx := context.Background()
	_, tok := s.NewUser(t, "owner@example.com")
	_, stranger := s.NewUser(t, "stranger@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	// An address the SSRF guard refuses: the deliveries exist, none leaves.
	storeEndpoint(t, s, p.ID, "https://127.0.0.1:9/hook")
	c, err := s.App.Store.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: a.ID, CallSID: "CA1", Direction: agentline.CallOutbound,
		From: "+14155550100", To: "+14155550199", Status: agentline.CallQueued}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{agentline.CallInProgress, agentline.CallCompleted} {
		if _, err := s.App.Store.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: st}, conversation.CallChanged); err != nil {
			t.Fatal(err)
		}
	}
	id := agentline.CallConversationID(c.ID)
	var got struct {
		Deliveries []struct {
			EventType  string `json:"event_type"`
			WebhookURL string `json:"webhook_url"`
			Status     string `json:"status"`
		} `json:"deliveries"`
	}
	s.Must(t, 200, "GET", "/api/conversations/"+id+"/deliveries", tok, nil, &got)
	types := map[string]bool{}
	for _, d := range got.Deliveries {
		types[d.EventType] = true
		if d.WebhookURL != "https://127.0.0.1:9/hook" || d.Status == "" {
			t.Errorf("delivery %+v", d)
		}
	}
	if !types[agentline.EventConversationStarted] || !types[agentline.EventConversationEnded] {
		t.Errorf("deliveries of %s: %+v", id, got.Deliveries)
	}
	s.Must(t, 404, "GET", "/api/conversations/"+id+"/deliveries", stranger, nil, nil)
	s.Must(t, 401, "GET", "/api/catalog", "", nil, nil)

	var cat struct {
		Models     []agentline.ModelChoice `json:"models"`
		Voices     []agentline.VoiceChoice `json:"voices"`
		EventTypes []string                `json:"event_types"`
	}
	s.Must(t, 200, "GET", "/api/catalog", tok, nil, &cat)
	if len(cat.Models) != len(agentline.KnownModels()) || len(cat.Voices) < 15 {
		t.Errorf("catalog: %d models, %d voices", len(cat.Models), len(cat.Voices))
	}
	if !slices.Equal(cat.EventTypes, agentline.EventTypes()) {
		t.Errorf("catalog event_types %v, want %v", cat.EventTypes, agentline.EventTypes())
	}
}
