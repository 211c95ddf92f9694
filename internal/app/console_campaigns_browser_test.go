package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// campaignView is a campaign as the API answers it.
type campaignView struct {
	agentline.Campaign
	RetryAfter string `json:"retry_after"`
}

// closedDays are three days of the week on which no one anywhere is in
// today, yesterday or tomorrow (UTC): a window of those days is closed in
// every zone for the whole test, so a dialing engine, once there, calls
// no one behind the test's back.
func closedDays() (api []string, labels []string) {
	names := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	today := int(time.Now().UTC().Weekday())
	for _, d := range []int{2, 3, 4} {
		day := names[(today+d)%7]
		api = append(api, day)
		labels = append(labels, strings.ToUpper(day[:1])+day[1:])
	}
	// The form lists them Monday first, as the API answers them.
	order := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	slices.SortFunc(api, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return api, labels
}

// The Campaigns pages in a real browser against the real API: a campaign
// made in the form (the API's defaults filled in; its refusals under the
// fields they name), a CSV file previewed and uploaded (2 bad rows and a
// duplicate, each refused row listed with its line), contacts paged and
// filtered, a contact's conversation linked, contacts.csv downloaded,
// Start, live counts while it runs (and no more reading once the page is
// left), Pause, settings changed, the do-not-call list, what a viewer
// sees, Cancel and Delete.
func TestConsoleCampaigns(t *testing.T) {
	t.Parallel()
	axe := axeSource(t)
	ctx := newBrowser(t)
	downloads := t.TempDir()
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads, BrowserContextID: browserContextID(ctx)})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "localhost"})
	_, tok := s.NewUser(t, "owner@example.com")
	_, viewerTok := s.NewUser(t, "viewer@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "greeting": "Hello, this is Ada."}, &a)
	// The agent's sandbox number, which the campaign calls from.
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/telephony/numbers", tok, map[string]any{"phone_number": "+14155550100", "agent_id": a.ID}, nil)
	s.Join(t, tok, p.ID, viewerTok, "viewer@example.com", agentline.RoleViewer)

	c := newConsole(t, ctx, s.URL)
	shots := screenshotDir(t)
	c.open("#/campaigns", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Campaigns")
	c.poll("the navigation", `document.querySelector("nav a[aria-current=page]").textContent === "Campaigns"`)
	c.poll("the empty list", `document.querySelector("main").innerText.includes("No campaigns yet.")`)
	c.accessible("campaigns")

	// The form holds the API's defaults.
	value := func(label string) string { return eval[string](t, ctx, field("New campaign", label)+`.value`) }
	checked := func(label string) bool { return eval[bool](t, ctx, field("New campaign", label)+`.checked`) }
	for label, want := range map[string]string{"Calling from": "09:00", "Calling until": "20:00", "Max concurrent calls": "1", "Calls per second": "1",
		"Max attempts": "3", "Retry after": "1h", "When a machine answers": "hang_up", "Agent": itoa(a.ID)} {
		if got := value(label); got != want {
			t.Errorf("new campaign's %s: %q, want the API's default %q", label, got, want)
		}
	}
	for _, d := range []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"} {
		if want := d != "Sat" && d != "Sun"; checked(d) != want {
			t.Errorf("new campaign's %s checked: %v, want %v", d, !want, want)
		}
	}
	if eval[bool](t, ctx, `!!`+field("New campaign", "Voicemail message")+`.closest(".field").hidden`) != true {
		t.Error("the voicemail message shows with hang_up")
	}

	// The API's refusals, each under its field: no day, no rate, a
	// message left without words.
	c.fill("New campaign", "Name", "Spring renewals")
	for _, d := range []string{"Mon", "Tue", "Wed", "Thu", "Fri"} {
		c.fill("New campaign", d, "false")
	}
	c.fill("New campaign", "Calls per second", "0")
	c.press("Create campaign")
	c.poll("the days' error", `document.querySelector("fieldset.days .field-error").textContent.includes("calling_window.days must name at least one day")`)
	days, dayLabels := closedDays()
	for _, d := range dayLabels {
		c.fill("New campaign", d, "true")
	}
	c.press("Create campaign")
	c.poll("the rate's error", `(el => document.getElementById(el.getAttribute("aria-describedby").split(" ")[0]).textContent)(`+field("New campaign", "Calls per second")+`).includes("calls_per_second must be more than 0")`)
	c.fill("New campaign", "Calls per second", "2")
	c.fill("New campaign", "When a machine answers", "leave_message")
	c.press("Create campaign")
	c.poll("the message's error", `(el => document.getElementById(el.getAttribute("aria-describedby").split(" ")[0]).textContent)(`+field("New campaign", "Voicemail message")+`).includes("voicemail.message is required")`)
	c.fill("New campaign", "Voicemail message", "Hi, this is Ada about your plan. Please call us back.")
	c.press("Create campaign")
	c.heading("Spring renewals")
	var list struct {
		Campaigns []campaignView `json:"campaigns"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/campaigns", tok, nil, &list)
	if len(list.Campaigns) != 1 {
		t.Fatalf("campaigns: %+v", list.Campaigns)
	}
	camp := list.Campaigns[0]
	if camp.Status != "draft" || !slices.Equal(camp.CallingWindow.Days, days) || camp.CallsPerSecond != 2 || camp.MaxAttempts != 3 ||
		camp.RetryAfter != "1h" || camp.Voicemail.Action != "leave_message" || camp.AgentID != a.ID {
		t.Errorf("the campaign made: %+v (days want %v)", camp, days)
	}
	page := "#/campaigns/" + itoa(camp.ID)
	c.poll("draft", `!!document.querySelector("#campaign-facts [data-status=draft]")`)
	runCampaignUpload(t, c, axe)
	c.shot(shots, "console-campaign.png")
	runCampaignContacts(t, c, s, tok, a, camp.ID, downloads)

	// Start: the page follows the status, and reads the counts again
	// every few seconds while the campaign runs.
	c.open(page, 1000, 900)
	c.heading("Spring renewals")
	eval[any](t, ctx, `window.reads = []; const f = window.fetch; window.fetch = (u, o) => { reads.push(String(u)); return f(u, o); }; 0`)
	c.press("Start")
	c.poll("running", `!!document.querySelector("#campaign-facts [data-status=running]")`)
	c.poll("Pause offered", `(t => t.includes("Pause") && t.includes("Cancel campaign") && !t.includes("Start"))(document.getElementById("campaign-actions").innerText)`)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/dnc", tok, map[string]string{"phone_number": "+14155550103", "reason": "asked by phone"}, nil)
	c.poll("the counts read again", `document.querySelector("#counts [data-count=do_not_call] b").textContent === "1"`)
	self := js("/api/campaigns/" + itoa(camp.ID))
	if n := eval[int](t, ctx, `reads.filter(u => u === `+self+`).length`); n < 1 {
		t.Errorf("the running campaign was read %d times", n)
	}
	// Leaving the page stops the reading.
	eval[any](t, ctx, `location.hash = "#/campaigns"; 0`)
	c.heading("Campaigns")
	eval[any](t, ctx, `reads.length = 0; 0`)
	time.Sleep(7 * time.Second)
	if got := eval[[]string](t, ctx, `reads`); slices.Contains(got, "/api/campaigns/"+itoa(camp.ID)) {
		t.Errorf("the campaign is still read after its page was left: %v", got)
	}
	c.poll("the list's running campaign", `(r => !!r && r.textContent.includes("running") && r.textContent.includes("Ada"))(document.querySelector("tr[data-campaign]"))`)

	// Pause, then change the window and the limits.
	eval[any](t, ctx, `location.hash = `+js(page)+`; 0`)
	c.heading("Spring renewals")
	c.press("Pause")
	c.poll("paused", `!!document.querySelector("#campaign-facts [data-status=paused]")`)
	c.poll("Resume offered", `(t => t.includes("Resume") && !t.includes("Pause"))(document.getElementById("campaign-actions").innerText)`)
	if eval[bool](t, ctx, `!![...document.querySelectorAll("form[aria-label='Campaign settings'] label")].find(l => l.textContent.trim() === "Agent")`) {
		t.Error("a started campaign's agent is offered for change")
	}
	c.fill("Campaign settings", "Calling until", "25:00")
	c.press("Save settings")
	c.poll("the end's error", `(el => document.getElementById(el.getAttribute("aria-describedby").split(" ")[0]).textContent)(`+field("Campaign settings", "Calling until")+`).includes("calling_window.end must be a time")`)
	c.fill("Campaign settings", "Calling until", "19:00")
	c.fill("Campaign settings", "Max concurrent calls", "5")
	c.press("Save settings")
	c.poll("the new window shown", `document.getElementById("campaign-facts").textContent.includes("–19:00") && document.getElementById("campaign-facts").textContent.includes("5 at once")`)
	var got campaignView
	s.Must(t, 200, "GET", "/api/campaigns/"+itoa(camp.ID), tok, nil, &got)
	if got.CallingWindow.End != "19:00" || got.MaxConcurrentCalls != 5 || got.Status != "paused" || !slices.Equal(got.CallingWindow.Days, days) {
		t.Errorf("after the save: %+v", got)
	}
	c.accessible("campaign")
	c.axeCheck(axe, "a paused campaign")
	c.open(page, 360, 800)
	c.accessible("campaign at 360 px")
	c.open(page, 1000, 900)

	runCampaignDNC(t, c, s, tok, p.ID, page, shots)
	runCampaignViewer(t, c, page)

	// Cancel (asked first), then delete.
	c.open(page, 1000, 900)
	c.heading("Spring renewals")
	c.press("Cancel campaign")
	c.poll("the question", `!!document.querySelector("dialog[open]")`)
	c.press("Cancel campaign")
	c.poll("cancelled", `!!document.querySelector("#campaign-facts [data-status=cancelled]")`)
	if eval[bool](t, ctx, `!!document.getElementById("campaign-actions") || !!document.getElementById("upload") || !!document.getElementById("settings")`) {
		t.Error("a cancelled campaign still offers actions, an upload or settings")
	}
	c.press("Delete campaign")
	c.press("Delete campaign")
	c.heading("Campaigns")
	c.poll("the list empty", `document.querySelector("main").innerText.includes("No campaigns yet.")`)
	c.noErrors("campaigns")
}

// runCampaignUpload chooses a CSV file, reads its preview, uploads it and
// reads the answer: 4 added, 1 duplicate, lines 5 and 6 refused.
func runCampaignUpload(t *testing.T, c console, axe string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "renewals.csv")
	rows := "phone_number,first_name,timezone\n" +
		"+1 (212) 555-0101,Ada,\n" +
		"+14155550102,Bo,America/Los_Angeles\n" +
		"+14155550103,Cy,\n" +
		"555-0104,Di,\n" +
		"+14155550105,Ed,Mars/Olympus\n" +
		"+12125550101,Ada again,\n" +
		"+14155550106,\"Flo, Jr.\",\n"
	if err := os.WriteFile(file, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	c.press("Upload contacts")
	c.poll("a file asked for", `document.getElementById("contacts-file-err").textContent === "Choose a CSV file first."`)
	if err := chromedp.Do(c.ctx, chromedp.SetUploadFiles(chromedp.ID("contacts-file"), []string{file})); err != nil {
		t.Fatal(err)
	}
	c.poll("the preview", `document.querySelectorAll("#csv-preview tbody tr").length === 5`)
	if got := c.text("#csv-preview-summary"); !strings.Contains(got, "7 rows under the header, the first 5 shown") {
		t.Errorf("the preview says %q", got)
	}
	c.axeCheck(axe, "a campaign with a file's preview")
	if got := c.text("#csv-preview tbody tr:nth-child(2)"); got != "3+14155550102BoAmerica/Los_Angeles" {
		t.Errorf("the preview's second row: %q", got)
	}
	c.press("Upload contacts")
	c.poll("the answer", `!!document.getElementById("upload-totals")`)
	for k, want := range map[string]string{"added": "4", "duplicates": "1", "do_not_call": "0", "errors": "2"} {
		if got := c.text(`#upload-totals [data-total=` + k + `]`); got != want {
			t.Errorf("upload %s: %q, want %s", k, got, want)
		}
	}
	for line, want := range map[string][]string{"5": {"555-0104, Di,", "E.164"}, "6": {"+14155550105, Ed, Mars/Olympus", "IANA"}} {
		got := c.text(`#upload-errors tr[data-line="` + line + `"]`)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("the row in error at line %s reads %q, want %q in it", line, got, w)
			}
		}
	}
	if n := eval[int](t, c.ctx, `document.querySelectorAll("#upload-errors tbody tr").length`); n != 2 {
		t.Errorf("%d rows in error listed", n)
	}
	c.axeCheck(axe, "a campaign with an upload's answer")
	c.poll("the counts", `document.querySelector("#counts [data-count=total] b").textContent === "4" && document.querySelector("#counts [data-count=pending] b").textContent === "4"`)
	c.poll("the contacts", `document.querySelectorAll("#contact-list tbody tr").length === 4`)
	if got := c.text(`#contact-list tr[data-phone="+14155550106"]`); !strings.Contains(got, "first_name: Flo, Jr.") || !strings.Contains(got, "Pending") {
		t.Errorf("Flo's row: %q", got)
	}
}

// runCampaignContacts pages the contacts, follows a contact's
// conversation and downloads contacts.csv.
func runCampaignContacts(t *testing.T, c console, s *apptest.Server, tok string, a agentline.Agent, campaignID int64, downloads string) {
	t.Helper()
	more := make([]map[string]string, 26)
	for i := range more {
		more[i] = map[string]string{"phone_number": fmt.Sprintf("+121255501%02d", 10+i)}
	}
	s.Must(t, 200, "POST", "/api/campaigns/"+itoa(campaignID)+"/contacts", tok, more, nil)
	// A dial with its call, as the dialing engine records one: an
	// outbound call of the agent, and the contact it completed.
	var placed struct {
		CallSID string `json:"call_sid"`
	}
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/telephony/outbound", tok, map[string]string{"to_number": "+14155550123"}, &placed)
	var convs struct {
		Conversations []agentline.Conversation `json:"conversations"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(a.ProjectID)+"/conversations?kind=phone", tok, nil, &convs)
	if len(convs.Conversations) != 1 {
		t.Fatalf("phone conversations: %+v", convs.Conversations)
	}
	conv := convs.Conversations[0].ID
	var first struct {
		Contacts []agentline.CampaignContact `json:"contacts"`
	}
	s.Must(t, 200, "GET", "/api/campaigns/"+itoa(campaignID)+"/contacts?limit=1", tok, nil, &first)
	ct := first.Contacts[0]
	db := s.App.Store
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO campaign_dials (campaign_id, contact_id, project_id, attempt, call_id, dialed_at, outcome)
			VALUES (%d, %d, %d, 1, %s, '2026-05-04 09:00:00+00:00', 'completed')`, campaignID, ct.ID, a.ProjectID, strings.TrimPrefix(conv, "call_")),
		fmt.Sprintf(`UPDATE campaign_contacts SET status = 'completed', attempts = 1, next_attempt_at = NULL WHERE id = %d`, ct.ID),
	} {
		if err := db.ExecAdmin(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}

	// Read again: a reload.
	if err := chromedp.Do(c.ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	c.heading("Spring renewals")
	c.poll("a page of contacts", `document.querySelectorAll("#contact-list tbody tr").length === 25`)
	c.press("More contacts")
	c.poll("the next page", `document.querySelectorAll("#contact-list tbody tr").length === 30`)
	if eval[bool](t, c.ctx, `[...document.querySelectorAll("#contacts button")].some(b => b.textContent === "More contacts" && !b.hidden)`) {
		t.Error("More contacts is offered after the last page")
	}
	c.fill("Filters", "Status", "completed")
	c.press("Apply filters")
	c.poll("the completed contact", `document.querySelectorAll("#contact-list tbody tr").length === 1`)
	if got := c.text("#contact-list tbody tr"); !strings.Contains(got, ct.PhoneNumber) || !strings.Contains(got, "Completed") || !strings.Contains(got, conv) {
		t.Errorf("the completed contact's row: %q", got)
	}
	eval[any](t, c.ctx, `document.querySelector("#contact-list a[href='#/conversations/`+conv+`']").click(); 0`)
	c.poll("the conversation's page", `location.hash === "#/conversations/`+conv+`" && !document.querySelector("main").hasAttribute("aria-busy") && !!document.getElementById("transcript-title")`)
	eval[any](t, c.ctx, `history.back(); 0`)
	c.heading("Spring renewals")

	c.press("Download contacts.csv")
	path := filepath.Join(downloads, fmt.Sprintf("campaign-%d-contacts.csv", campaignID))
	var body []byte
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			body = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 15 s", path)
		}
	}
	text := string(body)
	if !strings.HasPrefix(text, "id,phone_number,timezone,status,") || !strings.Contains(text, "variables.first_name") ||
		!strings.Contains(text, "'+14155550106") || !strings.Contains(text, conv) || strings.Count(text, "\n") < 31 {
		t.Errorf("contacts.csv:\n%s", text)
	}
}

// runCampaignDNC adds a number to the do-not-call list in the form (a bad
// one first), sees its contact counted as do not call, and removes it
// (cancelled once).
func runCampaignDNC(t *testing.T, c console, s *apptest.Server, tok string, projectID int64, page, shots string) {
	t.Helper()
	c.open("#/campaigns", 1000, 900)
	c.heading("Campaigns")
	c.poll("the number added through the API", `!!document.querySelector('#dnc-list tr[data-number="+14155550103"]')`)
	c.fill("Add to the do-not-call list", "Phone number", "555-0199")
	c.press("Add number")
	c.poll("the number's error", `(el => document.getElementById(el.getAttribute("aria-describedby").split(" ")[0]).textContent)(`+
		field("Add to the do-not-call list", "Phone number")+`).includes("is not in E.164 form")`)
	c.fill("Add to the do-not-call list", "Phone number", "+1 415 555 0102")
	c.fill("Add to the do-not-call list", "Reason", "asked by email")
	c.press("Add number")
	c.poll("the number listed", `(r => !!r && r.textContent.includes("asked by email"))(document.querySelector('#dnc-list tr[data-number="+14155550102"]'))`)
	if got := c.text("#dnc-said"); got != "+14155550102 is on the list." {
		t.Errorf("after adding: %q", got)
	}
	c.accessible("campaigns with the do-not-call list")
	c.shot(shots, "console-campaigns.png")

	// Its waiting contact is do not call now.
	eval[any](t, c.ctx, `location.hash = `+js(page)+`; 0`)
	c.heading("Spring renewals")
	c.poll("two do not call", `document.querySelector("#counts [data-count=do_not_call] b").textContent === "2"`)
	c.fill("Filters", "Status", "do_not_call")
	c.press("Apply filters")
	c.poll("the do-not-call contacts", `document.querySelectorAll("#contact-list tbody tr").length === 2 &&
		[...document.querySelectorAll("#contact-list tbody tr")].every(r => r.textContent.includes("Do not call"))`)

	eval[any](t, c.ctx, `location.hash = "#/campaigns"; 0`)
	c.heading("Campaigns")
	c.press("Remove +14155550102")
	c.poll("the question", `!!document.querySelector("dialog[open]")`)
	c.press("Cancel")
	c.poll("the question gone", `!document.querySelector("dialog[open]")`)
	c.press("Remove +14155550102")
	c.press("Remove number")
	c.poll("the number gone", `!document.querySelector('#dnc-list tr[data-number="+14155550102"]') && document.getElementById("dnc-said").textContent === "+14155550102 is off the list."`)
	var dnc struct {
		Items []agentline.DoNotCall `json:"items"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(projectID)+"/dnc", tok, nil, &dnc)
	if len(dnc.Items) != 1 || dnc.Items[0].PhoneNumber != "+14155550103" {
		t.Errorf("the list after the removal: %+v", dnc.Items)
	}
}

// runCampaignViewer signs in as a viewer: the campaigns and the list are
// there to read, with no control that changes them; then the owner again.
func runCampaignViewer(t *testing.T, c console, page string) {
	t.Helper()
	c.press("Sign out")
	c.signIn("viewer@example.com", apptest.Password)
	refused := []string{"Create campaign", "Add number", "Remove +14155550103", "Start", "Pause", "Resume", "Cancel campaign",
		"Upload contacts", "Save settings", "Delete campaign"}
	usable := `[...document.querySelectorAll("main button, main a.button")].filter(b => !b.disabled && b.getClientRects().length).map(b => b.textContent.trim())`
	for _, pg := range []struct{ hash, heading, ready string }{{"#/campaigns", "Campaigns", "#dnc-list"}, {page, "Spring renewals", "#contact-list"}} {
		c.open(pg.hash, 1000, 900)
		c.heading(pg.heading)
		c.poll(pg.hash+" drawn", `!!document.querySelector("`+pg.ready+`")`)
		for _, b := range eval[[]string](t, c.ctx, usable) {
			if slices.Contains(refused, b) {
				t.Errorf("a viewer sees %q on %s", b, pg.hash)
			}
		}
	}
	if !eval[bool](t, c.ctx, `[...document.querySelectorAll("form[aria-label='Campaign settings'] input, form[aria-label='Campaign settings'] select, form[aria-label='Campaign settings'] textarea")].every(e => e.disabled)`) {
		t.Error("a viewer can edit the campaign's settings")
	}
	c.press("Sign out")
	c.signIn("owner@example.com", apptest.Password)
}
