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
	c := openAnalytics(t, minutesAnalytics(), 1000, 900)
	ctx := c.ctx
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

// The analytics page shows what each campaign's calls came to as a table:
// the campaign's name, its dials, who answered, opt-outs, the success
// rate and the minutes.
func TestConsoleAnalyticsCampaigns(t *testing.T) {
	t.Parallel()
	c := openAnalytics(t, campaignAnalytics(), 1200, 900)
	c.poll("the campaigns table", `[...document.querySelectorAll("section.card h2")].some(h => h.textContent === "Campaigns")`)
	row := eval[string](t, c.ctx, `[...document.querySelectorAll("section.card")].find(s => s.querySelector("h2").textContent === "Campaigns")
		.querySelector("tbody tr").innerText`)
	cells := strings.Fields(strings.ReplaceAll(row, "\t", " "))
	if strings.Join(cells, " ") != "Renewals 120 71 30 6 11 4 60% 3:03" {
		t.Errorf("campaign row = %q", row)
	}
	c.noErrors("analytics")
}

// openAnalytics signs an owner of one project in to the console's
// analytics page, in a width by height window, with the analytics API
// answered in the browser by body.
func openAnalytics(t *testing.T, body []byte, width, height int64) console {
	t.Helper()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	answerInBrowser(t, ctx, "*/api/projects/*/analytics?*", body)
	c := newConsole(t, ctx, s.URL)
	c.open("#/analytics", width, height)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Analytics")
	return c
}

// answerInBrowser answers the browser's requests to URLs that match
// pattern with body as JSON, before they leave it.
func answerInBrowser(t *testing.T, ctx context.Context, pattern string, body []byte) {
	t.Helper()
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
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}}); err != nil {
		t.Fatal(err)
	}
}

// analyticsSpan is the from and to of an analytics answer: the last
// three days.
func analyticsSpan() (from, to string) {
	now := time.Now().UTC()
	return now.AddDate(0, 0, -2).Format("2006-01-02") + "T00:00:00Z", now.AddDate(0, 0, 1).Format("2006-01-02") + "T00:00:00Z"
}

// minutesAnalytics is an analytics answer with one conversation of 66
// seconds today.
func minutesAnalytics() []byte {
	today := time.Now().UTC().Format("2006-01-02")
	row := map[string]any{"conversations": 1, "minutes": 1.1, "tool_calls": 0, "tool_errors": 0, "evaluated": 0, "success_rate": nil}
	with := func(k string, v any) map[string]any {
		out := map[string]any{k: v}
		for kk, vv := range row {
			out[kk] = vv
		}
		return out
	}
	from, to := analyticsSpan()
	body, _ := json.Marshal(map[string]any{
		"from": from, "to": to,
		"conversations": map[string]any{
			"totals": with("leads", 0), "by_day": []any{with("day", today)}, "by_kind": []any{with("kind", "widget")},
			"by_agent": []any{with("agent_id", 1)}, "by_channel": []any{with("channel", "channel:1")}, "end_reasons": []any{with("end_reason", "client")},
		},
	})
	return body
}

// campaignAnalytics is an analytics answer with no conversation and one
// campaign's calls.
func campaignAnalytics() []byte {
	zero := map[string]any{"conversations": 0, "minutes": 0, "tool_calls": 0, "tool_errors": 0, "leads": 0, "evaluated": 0, "success_rate": nil}
	from, to := analyticsSpan()
	body, _ := json.Marshal(map[string]any{
		"from": from, "to": to,
		"conversations": map[string]any{"totals": zero, "by_day": []any{}, "by_kind": []any{}, "by_agent": []any{}, "by_channel": []any{}, "end_reasons": []any{}},
		"campaigns": []any{map[string]any{"campaign_id": 3, "name": "Renewals", "dialed": 120, "answered": 71, "voicemail": 30, "busy": 6,
			"no_answer": 11, "failed": 2, "opted_out": 4, "evaluated": 10, "successes": 6, "success_rate": 0.6, "minutes": 3.05}},
	})
	return body
}
