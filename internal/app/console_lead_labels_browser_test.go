package app_test

import (
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// Leads show their answers by the form's labels in the form's order, the
// table keeps its shape when a lead is opened (no word broken inside), and
// a live chat lead links to its conversation.
func TestConsoleLeadAnswersByLabel(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	tok, p, a := acmeWithAda(t, s)
	var chat agentline.Channel
	fields := []map[string]any{
		{"name": "full_name", "label": "Your name", "type": "text", "required": true},
		{"name": "email", "label": "Work email", "type": "email", "required": true},
		{"name": "company", "label": "Company", "type": "text"},
	}
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "form", "name": "Chat with us", "agent_id": a.ID,
		"settings": map[string]any{"form": map[string]any{"mode": "live_chat", "fields": fields}}}, &chat)
	var lead struct {
		LeadID int64 `json:"lead_id"`
	}
	s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(chat.ID), "", map[string]any{
		"full_name": "Linus Torvalds", "email": "linus@example.com", "company": "Linux Foundation"}, &lead)
	var full agentline.Lead
	s.Must(t, 200, "GET", "/api/leads/"+itoa(lead.LeadID), tok, nil, &full)
	if full.SessionID == nil {
		t.Fatalf("the live chat lead has no session: %+v", full)
	}

	c := newConsole(t, ctx, s.URL)
	c.open("#/leads", 1000, 760)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Leads")
	c.poll("the lead", `document.querySelectorAll("main tbody tr[data-lead]").length === 1`)
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll("main tbody td:nth-child(3) dt")].map(e => e.textContent)`)
	if strings.Join(labels, "|") != "Your name|Work email|Company" {
		t.Errorf("the answers are labelled %q, want the form's labels in its order", labels)
	}
	width := `document.querySelector("main tbody td:nth-child(3)").getBoundingClientRect().width`
	before := eval[float64](t, ctx, width)
	c.press("Open lead " + itoa(lead.LeadID))
	c.poll("the lead's details", `document.querySelector("main tbody tr.lead-more dl") !== null`)
	after := eval[float64](t, ctx, width)
	if after < before*0.9 {
		t.Errorf("opening the lead shrank the Answers column from %.0f to %.0f px", before, after)
	}
	// No answer breaks inside a word: each dd is as many lines high as
	// its words need, at most.
	broken := eval[[]string](t, ctx, `[...document.querySelectorAll("main tbody td:nth-child(3) dd")].filter(d => {
		const r = document.createRange(); r.selectNodeContents(d);
		const words = d.textContent.split(/\s+/).length;
		return r.getClientRects().length > words || getComputedStyle(d).wordBreak === "break-all";
	}).map(d => d.textContent)`)
	if len(broken) > 0 {
		t.Errorf("answers broken inside a word: %q", broken)
	}
	href := "#/conversations/" + *full.SessionID
	c.poll("the link to the conversation", `!!document.querySelector("main tbody tr.lead-more a[href='`+href+`']")`)
	c.accessible("leads")
	c.shot(shotDir(t), "lead-opened.png")
	c.press("Open the conversation")
	c.poll("the conversation", `location.hash === `+js(href))
	// Its page's Lead card names the answers the same way.
	c.poll("the conversation's lead", `!!document.getElementById("lead-title")`)
	card := eval[[]string](t, ctx, `[...document.getElementById("lead-title").parentElement.querySelectorAll("dt")].map(e => e.textContent)`)
	if strings.Join(card, "|") != "Your name|Work email|Company" {
		t.Errorf("the conversation's lead card labels %q", card)
	}
	c.noErrors("leads")
}
