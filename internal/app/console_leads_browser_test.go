package app_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
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

// Form channels and their leads in the console, against the real form API:
// a lead capture form made in the form editor and tried out, a
// live chat form with its key and snippets, leads posted to the public
// submit endpoint, then the Leads page: filters, a lead opened, the CSV
// export downloaded, a delete after the question.
func TestConsoleFormLeads(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	tok, p, a := acmeWithAda(t, s)
	c := newConsole(t, ctx, s.URL)
	shots := screenshotDir(t)
	downloads := t.TempDir()
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads, BrowserContextID: browserContextID(ctx)})
		return err
	})); err != nil {
		t.Fatal(err)
	}

	// A lead capture form, made in the console's form editor.
	c.open("#/channels", 1000, 760)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Channels")
	c.fill("Create channel", "Type", "form")
	c.fill("Create channel", "Name", "Contact form")
	c.fill("Create channel", "Agent", "")
	c.press("Create channel")
	c.heading("Contact form")
	if eval[bool](t, ctx, `!!document.getElementById("key")`) {
		t.Error("a lead capture form shows a key card; its page needs no key")
	}
	// The fields, made with the builder: added, reordered, one removed.
	// The API's error on a field inside the list is shown under the list.
	// A new form has default fields: they go first.
	for n := eval[int](t, ctx, `document.querySelectorAll(".builder-row").length`); n > 0; n-- {
		c.press("Remove field 1")
	}
	c.poll("no fields", `document.querySelector(".builder-rows").innerText.includes("No fields yet.")`)
	for i, f := range [][3]string{{"Topic", "topic", "select"}, {"Name", "Name", "text"}, {"Email", "email", "email"}, {"Scratch", "scratch", "text"}, {"You may contact me", "consent", "checkbox"}} {
		c.press("Add field")
		n := itoa(int64(i + 1))
		c.fillAria("Label of field "+n, f[0])
		c.fillAria("Name of field "+n, f[1])
		c.fillAria("Type of field "+n, f[2])
	}
	if eval[bool](t, ctx, `document.querySelector('[aria-label="Choices of field 2"]').disabled === false`) {
		t.Error("a text field's choices are editable")
	}
	c.fillAria("Choices of field 1", "Pricing, A demo")
	c.press("Remove field 4")
	c.press("Move field 1 down")
	c.press("Move field 2 down")
	for _, req := range []string{"1", "2", "4"} {
		c.fillAria("Required of field "+req, "true")
	}
	c.press("Save form")
	c.poll("the fields error", `document.querySelector('[aria-label="Label of field 1"]').getAttribute("aria-invalid") === "true"`)
	if msg := c.text("fieldset.builder .field-error"); !strings.Contains(msg, "lowercase") {
		t.Errorf("fields error: %q", msg)
	}
	c.fillAria("Name of field 1", "")
	// The JSON mode shows the rows as JSON, and takes them back.
	c.press("Edit as JSON")
	asJSON := eval[string](t, ctx, field("Form settings", "Fields as JSON")+`.value`)
	if !strings.Contains(asJSON, `"name": "name"`) || !strings.Contains(asJSON, `"A demo"`) || strings.Contains(asJSON, "scratch") {
		t.Errorf("the fields as JSON: %s", asJSON)
	}
	c.fill("Form settings", "Fields as JSON", "[{not json")
	c.press("Edit with the builder")
	c.poll("the JSON error", `document.querySelector("fieldset.builder .field-error").textContent.includes("JSON")`)
	c.fill("Form settings", "Fields as JSON", asJSON)
	c.press("Edit with the builder")
	c.poll("the rows again", `document.querySelectorAll(".builder-row").length === 4`)
	c.accessible("the form builder")
	c.shot(shots, "console-form-builder.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 740)); err != nil {
		t.Fatal(err)
	}
	c.accessible("the form builder at 360 px")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 760)); err != nil {
		t.Fatal(err)
	}
	c.fill("Form settings", "Submit button", "Request a call")
	c.fill("Form settings", "Thank-you message", "Thanks! We will call you back today.")
	c.press("Save form")
	c.poll("saved", `(f => !!f && f.querySelector("p[role=status]").textContent === "Saved.")(document.querySelector("form[aria-label='Form settings']"))`)
	var form agentline.Channel
	s.Must(t, 200, "GET", "/api/channels/1", tok, nil, &form)
	if fs := form.Settings.Form; fs == nil || fs.Mode != agentline.FormLeadCapture || len(fs.Fields) != 4 || fs.Fields[0].Name != "name" ||
		fs.Fields[1].Name != "email" || fs.Fields[2].Options[1] != "A demo" || fs.Fields[2].Required || !fs.Fields[3].Required ||
		fs.SubmitLabel != "Request a call" || fs.ThankYouMessage != "Thanks! We will call you back today." {
		t.Fatalf("the saved form: %+v", fs)
	}
	// The built form, submitted on its public page.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/api/channels/form/embed/1"),
		chromedp.SendKeys(chromedp.CSS("#f-name"), "Ada Lovelace"),
		chromedp.SendKeys(chromedp.CSS("#f-email"), "ada@example.com"),
		chromedp.SetValue(chromedp.CSS("#f-topic"), "Pricing"),
		chromedp.Click(chromedp.CSS("#f-consent")),
		chromedp.Click(chromedp.CSS("button[type=submit]")),
	); err != nil {
		t.Fatal(err)
	}
	c.poll("the public page's thank-you", `document.body.innerText.includes("Thanks! We will call you back today.")`)
	var leads struct {
		Leads []agentline.Lead `json:"leads"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/leads", tok, nil, &leads)
	if len(leads.Leads) != 1 || leads.Leads[0].Answers["name"] != "Ada Lovelace" || leads.Leads[0].Answers["topic"] != "Pricing" {
		t.Fatalf("leads after the public page: %+v", leads.Leads)
	}
	c.noErrors("the public form page")
	// The rest of the journey counts the leads made in the console.
	s.Must(t, 204, "DELETE", "/api/leads/"+itoa(leads.Leads[0].ID), tok, nil, nil)
	c.open("#/channels/1", 1000, 760)
	c.heading("Contact form")
	// Its snippet is the form page's iframe, no script, no key.
	c.poll("the iframe snippet", `!!document.getElementById("snippet-iframe")`)
	if ifr := c.text("#snippet-iframe"); !strings.Contains(ifr, s.URL+"/api/channels/form/embed/1") || eval[bool](t, ctx, `!!document.getElementById("snippet-script")`) {
		t.Errorf("lead capture snippets: iframe %q, and a script snippet: %v", ifr, eval[bool](t, ctx, `!!document.getElementById("snippet-script")`))
	}

	// Trying the form posts to the public submit endpoint: every problem
	// of error.fields is shown under its own field.
	c.fill("Try the form", "Name *", "Grace Hopper")
	c.fill("Try the form", "Email *", "grace at example")
	c.press("Request a call")
	c.poll("the answers' errors", field("Try the form", "You may contact me *")+`.getAttribute("aria-invalid") === "true"`)
	if msg := c.fieldError("Try the form", "Email *"); !strings.Contains(msg, "email address") {
		t.Errorf("email error: %q", msg)
	}
	if msg := c.fieldError("Try the form", "You may contact me *"); !strings.Contains(msg, "must be checked") {
		t.Errorf("consent error: %q", msg)
	}
	if msg := c.fieldError("Try the form", "Name *"); msg != "" {
		t.Errorf("name error: %q", msg)
	}
	c.accessible("the form channel")
	c.shot(shots, "console-form.png")
	c.fill("Try the form", "Email *", "grace@example.com")
	c.fill("Try the form", "Topic", "A demo")
	c.fill("Try the form", "You may contact me *", "true")
	c.press("Request a call")
	c.poll("the thank-you", `[...document.querySelectorAll("form[aria-label='Try the form'] p[role=status]")].some(p => p.textContent.startsWith("Thanks! We will call you back today. (lead "))`)

	// A live chat form: an agent, a key, and the gate's snippets with it.
	c.press("Channels")
	c.heading("Channels")
	c.fill("Create channel", "Type", "form")
	c.fill("Create channel", "Name", "Chat with us")
	c.fill("Create channel", "Agent", itoa(a.ID))
	c.press("Create channel")
	c.heading("Chat with us")
	c.fill("Form settings", "Mode", "live_chat")
	c.press("Save form")
	c.poll("the key card", `!!document.getElementById("key") && !!document.querySelector("form[aria-label='Form settings'] p[role=status]") && document.querySelector("form[aria-label='Form settings'] p[role=status]").textContent === "Saved."`)
	c.press("Generate key")
	c.poll("the whole key", `!!document.getElementById("whole-key")`)
	key := c.text("#whole-key")
	script, iframe := c.text("#snippet-script"), c.text("#snippet-iframe")
	// The one tag (pasted below, it mounts the gate itself); the two-step
	// form beside it names no agent.
	mount := c.text("#snippet-mount")
	if !strings.Contains(script, `data-public-key="`+key+`"`) || strings.Contains(script, "SvcChat.mount") ||
		!strings.Contains(mount, `SvcChat.mount({projectId: "`+itoa(p.ID)+`", channelId: "2"`) || strings.Contains(mount, "agentId") {
		t.Errorf("live chat script snippet:\n%s", script)
	}
	if !strings.Contains(iframe, s.URL+"/api/channels/form/embed-widget/2?key="+key) {
		t.Errorf("live chat iframe snippet:\n%s", iframe)
	}
	c.noErrors("the form channels")
	// The script snippet, pasted into a site's page, mounts the gate: the
	// form's fields in the widget.
	site := serveHTML(t, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head><body><h1>Acme shop</h1>`+script+`</body></html>`)
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL)); err != nil {
		t.Fatal(err)
	}
	c.poll("the gate on the site", `(h => !!h && !!h.shadowRoot && !!h.shadowRoot.querySelector("form.gate #g-email"))(document.querySelector("svc-chat"))`)

	// Visitors' submissions, to the public endpoint, without a token.
	submit := func(channel int64, answers map[string]any) int64 {
		t.Helper()
		var out struct {
			LeadID int64 `json:"lead_id"`
		}
		s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(channel), "", answers, &out)
		return out.LeadID
	}
	formula := submit(1, map[string]any{"name": "=1+1", "email": "alan@example.com", "consent": true})
	chat := submit(2, map[string]any{"name": "Ada Lovelace", "email": "ada@example.com"})

	// The Leads page (the tab keeps its sign-in): all three, newest first.
	c.open("#/leads", 1000, 760)
	c.heading("Leads")
	rows := `[...document.querySelectorAll("main tbody tr[data-lead]")].map(r => r.innerText.replace(/\s+/g, " ").trim())`
	c.poll("three leads", `document.querySelectorAll("main tbody tr[data-lead]").length === 3`)
	got := eval[[]string](t, ctx, rows)
	if !strings.Contains(got[0], "Chat with us") || !strings.Contains(got[0], "ada@example.com") ||
		!strings.Contains(got[2], "Contact form") || !strings.Contains(got[2], "Grace Hopper") || !strings.Contains(got[2], "You may contact me yes") || !strings.Contains(got[2], "Topic A demo") {
		t.Errorf("lead rows:\n%s", strings.Join(got, "\n"))
	}
	// Open the live chat lead: its mode, agent and conversation.
	c.press("Open lead " + itoa(chat))
	c.poll("the lead's details", `document.querySelector("main tbody tr.lead-more dl") !== null`)
	if d := c.text("main tbody tr.lead-more dl"); !strings.Contains(d, "ModeLive chat") || !strings.Contains(d, "AgentAda") || !strings.Contains(d, "ConversationOpen the conversation ses_") {
		t.Errorf("the live chat lead's details: %q", d)
	}
	c.shot(shots, "console-leads.png")
	// Filters: by agent (only the live chat has one), by channel, by date.
	c.fill("Filters", "Agent", itoa(a.ID))
	c.press("Apply filters")
	c.poll("the agent's lead", `document.querySelectorAll("main tbody tr[data-lead]").length === 1 && document.querySelector("main tbody").innerText.includes("Ada Lovelace")`)
	c.fill("Filters", "Agent", "")
	c.fill("Filters", "From", time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02"))
	c.press("Apply filters")
	c.poll("no leads from tomorrow", `document.querySelector("main").innerText.includes("No leads match.")`)
	c.fill("Filters", "From", time.Now().UTC().Format("2006-01-02"))
	c.fill("Filters", "Channel", "1")
	c.press("Apply filters")
	c.poll("the form's two leads", `document.querySelectorAll("main tbody tr[data-lead]").length === 2`)

	// The export holds what the filters select, formulas made harmless.
	c.press("Export CSV")
	file := filepath.Join(downloads, "leads-Acme.csv")
	var body []byte
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			body = b
			break
		}
		if time.Now().After(deadline) {
			names, _ := filepath.Glob(filepath.Join(downloads, "*"))
			t.Fatalf("no %s after 15 s; the download folder holds %v", file, names)
		}
	}
	records, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil {
		t.Fatalf("the CSV: %v\n%s", err, body)
	}
	header := []string{"id", "created_at", "channel_id", "mode", "session_id", "consent", "email", "name", "topic"}
	if len(records) != 3 || !reflect.DeepEqual(records[0], header) {
		t.Fatalf("the CSV has %d records, header %q:\n%s", len(records), records[0], body)
	}
	if r := records[1]; r[0] != itoa(formula) || r[2] != "1" || r[3] != "lead_capture" || r[5] != "yes" || r[7] != "'=1+1" || r[8] != "" {
		t.Errorf("the newest lead in the CSV: %q", r)
	}
	if r := records[2]; r[6] != "grace@example.com" || r[7] != "Grace Hopper" || r[8] != "A demo" {
		t.Errorf("the tried lead in the CSV: %q", r)
	}

	// Delete asks first: Cancel keeps the lead, Delete lead removes it.
	c.press("Delete")
	c.poll("the question", `!!document.querySelector("dialog[open]")`)
	c.press("Cancel")
	s.Must(t, 200, "GET", "/api/leads/"+itoa(formula), tok, nil, nil)
	c.press("Delete")
	c.press("Delete lead")
	s.Must(t, 200, "GET", "/api/leads/"+itoa(chat), tok, nil, nil)
	for deadline := time.Now().Add(10 * time.Second); s.Do(t, "GET", "/api/leads/"+itoa(formula), tok, nil).Status != 404; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lead is still there after Delete lead")
		}
	}
	c.poll("the list without it", `document.querySelectorAll("main tbody tr[data-lead]").length === 2 && !document.querySelector("main tbody").innerText.includes("=1+1")`)
	c.noErrors("the leads page")
	c.open("#/leads", 360, 740)
	c.poll("the leads at 360 px", `document.querySelectorAll("main tbody tr[data-lead]").length === 2`)
	c.accessible("the leads page at 360 px")
}
