package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The analytics page shows what each campaign's calls came to as a table:
// the campaign's name, its dials, who answered, opt-outs, the success
// rate and the minutes.
func TestConsoleAnalyticsCampaigns(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	interceptCampaignAnalytics(t, ctx)
	c := newConsole(t, ctx, s.URL)
	c.open("#/analytics", 1200, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Analytics")
	c.poll("the campaigns table", `[...document.querySelectorAll("section.card h2")].some(h => h.textContent === "Campaigns")`)
	row := eval[string](t, ctx, `[...document.querySelectorAll("section.card")].find(s => s.querySelector("h2").textContent === "Campaigns")
		.querySelector("tbody tr").innerText`)
	cells := strings.Fields(strings.ReplaceAll(row, "\t", " "))
	if strings.Join(cells, " ") != "Renewals 120 71 30 6 11 4 60% 3:03" {
		t.Errorf("campaign row = %q", row)
	}
	c.noErrors("analytics")
}

// interceptCampaignAnalytics answers the analytics API in the browser with
// no conversation and one campaign's calls.
func interceptCampaignAnalytics(t *testing.T, ctx context.Context) {
	t.Helper()
	zero := map[string]any{"conversations": 0, "minutes": 0, "tool_calls": 0, "tool_errors": 0, "leads": 0, "evaluated": 0, "success_rate": nil}
	body, _ := json.Marshal(map[string]any{
		"from": time.Now().UTC().AddDate(0, 0, -2).Format("2006-01-02") + "T00:00:00Z", "to": time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02") + "T00:00:00Z",
		"conversations": map[string]any{"totals": zero, "by_day": []any{}, "by_kind": []any{}, "by_agent": []any{}, "by_channel": []any{}, "end_reasons": []any{}},
		"campaigns": []any{map[string]any{"campaign_id": 3, "name": "Renewals", "dialed": 120, "answered": 71, "voicemail": 30, "busy": 6,
			"no_answer": 11, "failed": 2, "opted_out": 4, "evaluated": 10, "successes": 6, "success_rate": 0.6, "minutes": 3.05}},
	})
	err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		go chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: 200, Body: body,
			ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "application/json"}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/projects/*/analytics?*"}}}); err != nil {
		t.Fatal(err)
	}
}
