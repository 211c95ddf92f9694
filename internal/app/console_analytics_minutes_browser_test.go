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

// The analytics' minutes chart and the minutes total read alike (m:ss):
// a 1:06 total is not beside an axis reading 1.10.
func TestConsoleAnalyticsMinutesAgree(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	interceptAnalytics(t, ctx)
	c := newConsole(t, ctx, s.URL)
	c.open("#/analytics", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Analytics")
	c.poll("the charts", `document.querySelectorAll("figure.chart").length === 4`)
	total := eval[string](t, ctx, `[...document.querySelectorAll(".totals div")].find(d => d.textContent.endsWith("Minutes")).querySelector("b").textContent`)
	axis := eval[string](t, ctx, `[...document.querySelectorAll("figure.chart")].find(f => f.textContent.startsWith("Minutes per day")).querySelector("svg text").textContent`)
	label := eval[string](t, ctx, `[...document.querySelectorAll("figure.chart")].find(f => f.textContent.startsWith("Minutes per day")).querySelector("svg").getAttribute("aria-label")`)
	if total != "1:06" || axis != "1:06" || !strings.Contains(label, "1:06 in all") {
		t.Errorf("minutes: total %q, axis %q, chart label %q; want 1:06 in each", total, axis, label)
	}
	c.shot(shotDir(t), "analytics-minutes.png")
	c.noErrors("analytics")
}

// interceptAnalytics answers the analytics API in the browser with one
// conversation of 66 seconds today.
func interceptAnalytics(t *testing.T, ctx context.Context) {
	t.Helper()
	today := time.Now().UTC().Format("2006-01-02")
	row := map[string]any{"conversations": 1, "minutes": 1.1, "tool_calls": 0, "tool_errors": 0, "evaluated": 0, "success_rate": nil}
	with := func(k string, v any) map[string]any {
		out := map[string]any{k: v}
		for kk, vv := range row {
			out[kk] = vv
		}
		return out
	}
	body, _ := json.Marshal(map[string]any{
		"from": time.Now().UTC().AddDate(0, 0, -2).Format("2006-01-02") + "T00:00:00Z", "to": time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02") + "T00:00:00Z",
		"conversations": map[string]any{
			"totals": with("leads", 0), "by_day": []any{with("day", today)}, "by_kind": []any{with("kind", "widget")},
			"by_agent": []any{with("agent_id", 1)}, "by_channel": []any{with("channel", "channel:1")}, "end_reasons": []any{with("end_reason", "client")},
		},
	})
	err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		// Listen's fn must not run commands: the answer goes from another
		// goroutine.
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
