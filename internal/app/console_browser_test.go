package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// console drives the web console the way a person does: fields found by
// their labels, buttons by their text.
type console struct {
	t   *testing.T
	ctx context.Context
	url string
}

// js quotes a Go string for JavaScript.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// newConsole starts recording the uncaught errors and console.error calls
// of every page the browser opens, for noErrors.
func newConsole(t *testing.T, ctx context.Context, url string) console {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.pageErrors = [];
addEventListener("error", e => pageErrors.push(String(e.message)));
addEventListener("unhandledrejection", e => pageErrors.push(String(e.reason)));
const consoleError = console.error;
console.error = (...args) => { pageErrors.push("console.error: " + args.map(String).join(" ")); consoleError(...args); };`})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	return console{t: t, ctx: ctx, url: url}
}

// noErrors fails on uncaught errors and console errors of the page so far.
func (c console) noErrors(where string) {
	c.t.Helper()
	if errs := eval[[]string](c.t, c.ctx, `window.pageErrors || []`); len(errs) > 0 {
		c.t.Errorf("%s: uncaught errors in the page: %v", where, errs)
	}
}

func (c console) open(hash string, width, height int64) {
	c.t.Helper()
	if err := chromedp.Do(c.ctx, chromedp.EmulateViewport(width, height), chromedp.Navigate(c.url+"/"+hash)); err != nil {
		c.t.Fatal(err)
	}
}

// heading waits for the page whose h1 is title.
func (c console) heading(title string) {
	c.t.Helper()
	c.poll("the page "+title, `(h => !!h && h.textContent === `+js(title)+`)(document.querySelector("main h1"))`)
}

func (c console) poll(what, expr string) {
	c.t.Helper()
	if err := pollExpr(c.ctx, expr, 30*time.Second, 50*time.Millisecond); err != nil {
		main := eval[string](c.t, c.ctx, `location.hash + "\n" + document.querySelector("main").innerText`)
		c.t.Fatalf("waiting for %s: %v\npage: %s", what, err, main)
	}
}

// field is JavaScript for the control labelled label in the form named
// form (its aria-label), or in the page.
func field(form, label string) string {
	scope := "document"
	if form != "" {
		scope = `document.querySelector('form[aria-label=` + js(form) + `]')`
	}
	return `[...` + scope + `.querySelectorAll("label")].find(l => l.textContent.trim() === ` + js(label) + `).control`
}

// fill sets a field and tells the page, as typing would.
func (c console) fill(form, label, value string) {
	c.t.Helper()
	eval[any](c.t, c.ctx, `(el => { if (el.type === "checkbox") el.checked = `+js(value)+` === "true"; else el.value = `+js(value)+`;
		el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); })(`+field(form, label)+`)`)
}

// press clicks the button (or link) whose text (or aria-label) is text, in
// the dialog when one is open.
func (c console) press(text string) {
	c.t.Helper()
	named := `(b => (b.textContent.trim() === ` + js(text) + ` || b.getAttribute("aria-label") === ` + js(text) + `))`
	c.poll("the button "+text, `[...document.querySelectorAll("button, a")].some(b => `+named+`(b) && !b.disabled)`)
	eval[any](c.t, c.ctx, `(d => [...(d || document).querySelectorAll("button, a")].find(`+named+`).click())(document.querySelector("dialog[open]"))`)
}

// enter focuses the button whose text is text and presses Enter on it: a
// real key press, which also counts as the user's gesture.
func (c console) enter(text string) {
	c.t.Helper()
	c.poll("the button "+text, `[...document.querySelectorAll("button")].some(b => b.textContent.trim() === `+js(text)+` && !b.disabled)`)
	eval[any](c.t, c.ctx, `[...document.querySelectorAll("button")].find(b => b.textContent.trim() === `+js(text)+`).focus()`)
	if err := chromedp.Do(c.ctx, chromedp.KeyEvent("\r")); err != nil {
		c.t.Fatal(err)
	}
}

func (c console) text(selector string) string {
	c.t.Helper()
	return eval[string](c.t, c.ctx, `(e => e ? e.textContent : "")(document.querySelector(`+js(selector)+`))`)
}

// fieldError is the error shown under the field.
func (c console) fieldError(form, label string) string {
	c.t.Helper()
	return eval[string](c.t, c.ctx, `(el => document.getElementById(el.getAttribute("aria-describedby").split(" ")[0]).textContent)(`+field(form, label)+`)`)
}

// labelled fails when a control of the page has no label, or the page is
// wider than the screen.
func (c console) accessible(page string) {
	c.t.Helper()
	if bad := eval[[]string](c.t, c.ctx, `[...document.querySelectorAll("input, select, textarea")].filter(e => !e.labels.length && !e.getAttribute("aria-label")).map(e => e.outerHTML)`); len(bad) > 0 {
		c.t.Errorf("%s: controls without a label: %v", page, bad)
	}
	if w := eval[float64](c.t, c.ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); w > 0 {
		c.t.Errorf("%s: the page is %v px wider than the screen", page, w)
	}
}

// shot saves a screenshot of the whole page.
func (c console) shot(dir, name string) {
	c.t.Helper()
	png, err := chromedp.Run(c.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		c.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		c.t.Fatal(err)
	}
}

func (c console) signIn(email, password string) {
	c.t.Helper()
	c.heading("Sign in to agentline")
	c.fill("Sign in", "Email", email)
	c.fill("Sign in", "Password", password)
	c.press("Sign in")
}

// The main journey in a real browser: sign in, make a project, an agent
// and a voice widget channel, generate its key (whole once, copied, then
// only its prefix), paste the console's snippet into a site's page and talk
// to the sandbox provider there, then read the session's transcript and
// the analytics in the console.
func TestConsoleWidgetJourney(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	s.NewUser(t, "owner@example.com")
	var mu sync.Mutex
	var snippet string
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head><body><h1>Acme shop</h1>`+snippet+`</body></html>`)
	}))
	defer host.Close()
	c := newConsole(t, ctx, s.URL)
	shots := screenshotDir(t)
	// The copy button writes to the clipboard, and the test reads it.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, browser.SetPermission, browser.SetPermissionParams{
				Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: s.URL, BrowserContextID: browserContextID(ctx)})
			return err
		})); err != nil {
			t.Fatal(err)
		}
	}

	// Sign in: a wrong password is answered on the form, then the right one.
	c.open("", 1000, 700)
	c.heading("Sign in to agentline")
	c.accessible("sign-in")
	c.shot(shots, "console-signin.png")
	c.signIn("owner@example.com", "wrong password")
	c.poll("the sign-in error", `document.querySelector(".form-error").textContent !== ""`)
	if msg := c.text(".form-error"); !strings.Contains(msg, "email or password") {
		t.Errorf("sign-in error: %q", msg)
	}
	c.fill("Sign in", "Password", apptest.Password)
	c.enter("Sign in")

	// A new account has no project: the console asks for one.
	c.heading("Projects")
	c.fill("Create project", "Name", "Acme")
	c.fill("Create project", "Name shown to visitors", "Acme help")
	c.press("Create project")
	c.heading("Agents")

	// An agent: a bad model is answered next to the model field.
	c.fill("Create agent", "Name", "Ada")
	c.fill("Create agent", "Model", "gpt-4")
	c.press("Create agent")
	c.poll("the model error", field("Create agent", "Model")+`.getAttribute("aria-invalid") === "true"`)
	if msg := c.fieldError("Create agent", "Model"); !strings.Contains(msg, "gpt-realtime") {
		t.Errorf("model error: %q", msg)
	}
	c.fill("Create agent", "Model", "gpt-realtime")
	c.fill("Create agent", "Instructions", "You answer questions about the Acme shop.")
	c.press("Create agent")
	c.heading("Ada")
	// The agent's editor: pickers of the catalog's models, voices (with
	// their phone mapping) and languages.
	c.fill("Agent settings", "Greeting", "Hello from Acme!")
	if langs := eval[[]string](t, ctx, `[...`+field("Agent settings", "Language")+`.options].map(o => o.value)`); !slices.Contains(langs, "de-DE") || !slices.Contains(langs, "en-US") {
		t.Errorf("languages offered: %v", langs)
	}
	c.fill("Agent settings", "Language", "de-DE")
	c.press("Save")
	c.poll("saved", `document.querySelector("form p[role=status]").textContent.startsWith("Saved")`)
	// Another provider's model offers that provider's voices, its default
	// chosen.
	voices := `[...` + field("Agent settings", "Voice") + `.options].map(o => o.value)`
	for _, m := range []struct{ model, voice, has, lacks string }{{"gemini-live-2.5-flash-preview", "Puck", "Kore", "marin"}, {"gpt-realtime", "marin", "cedar", "Puck"}} {
		c.fill("Agent settings", "Model", m.model)
		if vs := eval[[]string](t, ctx, voices); !slices.Contains(vs, m.has) || slices.Contains(vs, m.lacks) {
			t.Errorf("voices offered for %s: %v", m.model, vs)
		}
		eval[any](t, ctx, `document.querySelector("form p[role=status]").textContent = ""`)
		c.press("Save")
		c.poll("saved", `document.querySelector("form p[role=status]").textContent.startsWith("Saved")`)
		if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		c.heading("Ada")
		if v := eval[string](t, ctx, field("Agent settings", "Voice")+`.value`); v != m.voice {
			t.Errorf("voice after changing the model to %s: %q, want %q", m.model, v, m.voice)
		}
	}
	// A text-to-speech voice says what phone calls speak it as.
	c.fill("Agent settings", "Voice", "fable")
	if hint := c.text("#voice-mapping"); !strings.Contains(hint, "ballad") {
		t.Errorf("the voice mapping shown for fable: %q", hint)
	}
	// Recording and analysis: data to extract, built as rows.
	c.fill("Agent settings", "Record phone calls", "true")
	c.fill("Agent settings", "Success criteria", "The caller learns when the order arrives.")
	for i, f := range [][3]string{{"order_id", "string", "The order's number"}, {"resolved", "boolean", "Whether the question was answered"}, {"topic", "enum", "What it was about"}} {
		c.press("Add field")
		n := itoa(int64(i + 1))
		c.fillAria("Name of field "+n, f[0])
		c.fillAria("Type of field "+n, f[1])
		c.fillAria("Description of field "+n, f[2])
	}
	c.fillAria("Choices of field 3", "billing, shipping")
	c.shot(shots, "console-agent-editor.png")
	c.press("Save")
	c.poll("saved", `document.querySelector("form p[role=status]").textContent.startsWith("Saved")`)
	var ada struct {
		Voice, Language, Greeting string
		RecordCalls               bool `json:"record_calls"`
		Analysis                  struct {
			Summary         bool   `json:"summary"`
			SuccessCriteria string `json:"success_criteria"`
			DataSchema      struct {
				Properties map[string]struct {
					Type string   `json:"type"`
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"data_schema"`
		} `json:"analysis"`
	}
	s.Must(t, 200, "GET", "/api/agents/1", s.Login(t, "owner@example.com", apptest.Password), nil, &ada)
	props := ada.Analysis.DataSchema.Properties
	if ada.Voice != "fable" || ada.Language != "de-DE" || !ada.RecordCalls || !ada.Analysis.Summary || ada.Analysis.SuccessCriteria == "" ||
		len(props) != 3 || props["resolved"].Type != "boolean" || strings.Join(props["topic"].Enum, ",") != "billing,shipping" {
		t.Errorf("the agent after the editor: %+v", ada)
	}
	// Reloaded, the rows come back from the schema.
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	c.heading("Ada")
	c.poll("the fields to extract", `document.querySelectorAll(".builder-row").length === 3 && document.querySelector('[aria-label="Choices of field 3"]').value === "billing, shipping"`)
	if g := eval[string](t, ctx, field("Agent settings", "Greeting")+`.value`); g != "Hello from Acme!" {
		t.Errorf("greeting after reload: %q", g)
	}
	c.accessible("agent")
	if tabs := c.text("nav.tabs"); strings.Contains(tabs, "Phone") {
		t.Errorf("the agent's tabs are %q: no Phone tab without TELEPHONY_ENABLED", tabs)
	}
	if nav := c.text("header nav"); strings.Contains(nav, "Calls") {
		t.Errorf("navigation %q: no Calls page without TELEPHONY_ENABLED", nav)
	}
	c.open("#/agents", 1000, 700)
	c.poll("the agent in the list", `document.querySelector("main table") && document.querySelector("main table").innerText.includes("gpt-realtime")`)
	c.shot(shots, "console-agents.png")

	// Tools: parameters built as rows; in JSON mode they must be JSON,
	// said under the builder.
	c.open("#/agents/1/tools", 1000, 700)
	c.heading("Ada")
	c.fill("Add tool", "Name", "lookup_order")
	c.fill("Add tool", "URL", "https://hooks.example.com/order")
	c.press("Add parameter")
	c.fillAria("Name of parameter 1", "id")
	c.fillAria("Required of parameter 1", "true")
	c.press("Edit as JSON")
	c.fill("Add tool", "Parameters as JSON", "{not json")
	c.press("Add tool")
	c.poll("the parameters error", field("Add tool", "Parameters as JSON")+`.getAttribute("aria-invalid") === "true"`)
	c.fill("Add tool", "Parameters as JSON", `{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}`)
	c.press("Add tool")
	c.poll("the tool", `document.querySelector("main table") && document.querySelector("main table").innerText.includes("lookup_order")`)
	// Knowledge: upload a file, try a search.
	c.press("Knowledge")
	c.poll("the upload form", `!!document.querySelector("form[aria-label=Upload]")`)
	eval[any](t, ctx, `(el => { const dt = new DataTransfer(); dt.items.add(new File(["# Returns\n\nReturns are free within 30 days of delivery."], "returns.md", {type: "text/markdown"})); el.files = dt.files; })(`+field("Upload", "File (text, Markdown or HTML)")+`)`)
	c.press("Upload")
	c.poll("the document", `document.querySelector("main table") && document.querySelector("main table").innerText.includes("text/markdown")`)
	c.fill("Search", "Search the documents", "free returns")
	c.press("Search")
	c.poll("a passage", `document.querySelector("main ol") && document.querySelector("main ol").innerText.includes("free within 30 days")`)
	c.shot(shots, "console-knowledge.png")

	// A voice widget channel with a color, seen in the preview.
	c.press("Channels")
	c.heading("Channels")
	c.fill("Create channel", "Name", "Website")
	c.press("Create channel")
	c.heading("Website")
	c.fill("Channel settings", "Color", "#0f766e")
	if bg := eval[string](t, ctx, `getComputedStyle(document.querySelector(".pv-launcher")).backgroundColor`); bg != "rgb(15, 118, 110)" {
		t.Errorf("preview launcher is %s after picking #0f766e", bg)
	}
	c.fill("Channel settings", "Position", "bottom-left")
	c.fill("Channel settings", "Show the transcript", "true")
	c.fill("Channel settings", "Show text chat", "true")
	c.press("Save settings")
	c.poll("settings saved", `[...document.querySelectorAll("p[role=status]")].some(p => p.textContent === "Saved.")`)

	// A form channel has its form's settings and no widget snippets.
	c.press("Channels")
	c.heading("Channels")
	c.fill("Create channel", "Type", "form")
	c.fill("Create channel", "Name", "Contact form")
	c.fill("Create channel", "Agent", "")
	c.press("Create channel")
	c.heading("Contact form")
	c.poll("the form settings", `!!document.querySelector("form[aria-label='Form settings']") && !document.getElementById("snippet-script")`)
	c.open("#/channels/1", 1000, 700)
	c.heading("Website")

	// The key: restricted to the site, shown whole once, copied.
	c.fill("New key", "Allowed origins", "not an origin")
	c.press("Generate key")
	c.poll("the origins error", field("New key", "Allowed origins")+`.getAttribute("aria-invalid") === "true"`)
	c.fill("New key", "Allowed origins", host.URL)
	c.fill("New key", "Requests per minute", "120")
	c.press("Generate key")
	c.poll("the whole key", `!!document.getElementById("whole-key")`)
	key := c.text("#whole-key")
	if !strings.HasPrefix(key, agentline.WidgetKeyPrefix) || len(key) < 30 {
		t.Fatalf("key shown: %q", key)
	}
	c.enter("Copy key")
	c.poll("copied", `[...document.querySelectorAll("button")].some(b => b.textContent === "Copied")`)
	copied, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil || copied != key {
		t.Errorf("clipboard holds %q (%v), want the key", copied, err)
	}
	script := c.text("#snippet-script")
	// The script snippet is the one tag (pasted below, it mounts itself);
	// the two-step form with SvcChat.mount is offered beside it.
	if !strings.Contains(script, `data-public-key="`+key+`"`) || strings.Contains(script, "SvcChat.mount") || !strings.Contains(c.text("#snippet-mount"), "SvcChat.mount") {
		t.Errorf("script snippet while the key is shown:\n%s", script)
	}
	if !eval[bool](t, ctx, `[...document.querySelectorAll("button")].some(b => b.textContent === "Copy script tag with SvcChat.mount (explicit options)")`) {
		t.Error("no copy button for the SvcChat.mount snippet, spelled as the API's name")
	}
	c.shot(shots, "console-channel.png")

	// After a reload only the prefix is left, anywhere on the page.
	c.noErrors("the channel page")
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	c.heading("Website")
	c.poll("the key's prefix", `!!document.getElementById("key-prefix")`)
	if page := eval[string](t, ctx, `document.documentElement.outerHTML`); strings.Contains(page, key) {
		t.Error("the whole key is still on the page after a reload")
	}
	if p := c.text("#key-prefix"); p != key[:len(agentline.WidgetKeyPrefix)+4]+"…" {
		t.Errorf("prefix shown: %q", p)
	}
	if got := eval[string](t, ctx, field("Origins and limits", "Allowed origins")+`.value`); got != host.URL {
		t.Errorf("allowed origins shown: %q", got)
	}
	if sn := c.text("#snippet-script"); !strings.Contains(sn, "YOUR_WIDGET_KEY") {
		t.Errorf("script snippet after reload:\n%s", sn)
	}

	// The snippet, pasted into the site's page, talks to the sandbox.
	mu.Lock()
	snippet = script
	mu.Unlock()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(480, 720), chromedp.Navigate(host.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the widget", `(h => !!h && !!h.shadowRoot && !!h.shadowRoot.querySelector(".launcher"))(document.querySelector("svc-chat"))`)
	eval[any](t, ctx, shadow+`.querySelector(".launcher").click()`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "the sandbox's words", shadow+`.querySelector("ol").innerText.includes("agentline sandbox")`)
	eval[any](t, ctx, `(r => { r.querySelector("input").value = "Do you ship to Canada?"; r.querySelector("form").requestSubmit(); })(`+shadow+`)`)
	poll(t, ctx, "the answer to the text", shadow+`.querySelector("ol").innerText.includes("In the sandbox I can only repeat it.")`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	deadline := time.Now().Add(15 * time.Second)
	for {
		var list struct {
			Sessions []struct {
				EndedAt *time.Time `json:"ended_at"`
			} `json:"sessions"`
		}
		s.Must(t, 200, "GET", "/api/projects/1/sessions", s.Login(t, "owner@example.com", apptest.Password), nil, &list)
		if len(list.Sessions) == 1 && list.Sessions[0].EndedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session was not recorded as ended: %+v", list)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Back in the console (the same tab keeps its sign-in): the session's
	// transcript, the analytics.
	c.open("#/conversations", 1000, 700)
	c.heading("Conversations")
	c.poll("the conversation", `!!document.querySelector("main tbody tr")`)
	if row := c.text("main tbody tr"); !strings.Contains(row, "Widget") || !strings.Contains(row, "Website") || !strings.Contains(row, "Ended") {
		t.Errorf("the conversation's row: %q", row)
	}
	c.fill("Filters", "From", time.Now().UTC().AddDate(0, 0, 2).Format("2006-01-02"))
	c.press("Apply filters")
	c.poll("no conversations after tomorrow", `document.querySelector("main").innerText.includes("No conversations match these filters.")`)
	c.press("Analytics")
	c.heading("Analytics")
	c.poll("the charts", `document.querySelectorAll(".chart svg").length === 4`)
	if n := c.text(".totals b"); n != "1" {
		t.Errorf("conversations total shown: %q", n)
	}
	if bars := eval[float64](t, ctx, `document.querySelectorAll(".chart:first-child rect.bar").length`); bars < 30 {
		t.Errorf("%v bars in the sessions chart, want one per day", bars)
	}
	c.shot(shots, "console-analytics.png")

	// Leads: none yet (TestConsoleFormLeads shows a list).
	c.press("Leads")
	c.heading("Leads")
	c.poll("no leads", `document.querySelector("main").innerText.includes("No leads match.")`)

	// Members: another account is invited, accepts, and is listed.
	s.App.Auth.CreateUser(context.Background(), "viewer@example.com", apptest.Password)
	c.press("Members")
	c.heading("Members of Acme")
	c.fill("Invite", "Email to invite", "not an email")
	c.press("Invite")
	c.poll("the bad email error", `document.querySelector("form[aria-label='Invite'] .field-error:not(:empty), form[aria-label='Invite'] .form-error:not(:empty)") !== null`)
	c.fill("Invite", "Email to invite", "viewer@example.com")
	c.fill("Invite", "Role", "viewer")
	c.press("Invite")
	c.poll("the invitation link", `!!document.getElementById("invite-link")`)
	link := c.text("#invite-link")
	s.Must(t, 200, "POST", "/api/invites/accept", s.Login(t, "viewer@example.com", apptest.Password),
		map[string]string{"token": link[strings.LastIndex(link, "/")+1:]}, nil)
	c.press("Agents")
	c.heading("Agents")
	c.press("Members")
	c.heading("Members of Acme")
	c.poll("the new member", `document.querySelector("main table").innerText.includes("viewer@example.com")`)

	// The project switcher.
	s.Must(t, 201, "POST", "/api/projects", s.Login(t, "owner@example.com", apptest.Password), map[string]string{"name": "Beta"}, nil)
	c.open("#/agents", 1000, 700)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	c.heading("Agents")
	eval[any](t, ctx, `(el => { el.value = [...el.options].find(o => o.textContent === "Beta").value; el.dispatchEvent(new Event("change")); })(document.getElementById("project-switch"))`)
	c.poll("Beta's agents", `document.querySelector("main").innerText.includes("No agents yet")`)
	eval[any](t, ctx, `(el => { el.value = [...el.options].find(o => o.textContent === "Acme").value; el.dispatchEvent(new Event("change")); })(document.getElementById("project-switch"))`)
	c.poll("Acme's agents", `document.querySelector("main table") && document.querySelector("main table").innerText.includes("Ada")`)

	// At 360 px everything is one column and nothing is cut off.
	for _, page := range []struct{ hash, title string }{
		{"#/agents", "Agents"}, {"#/agents/1", "Ada"}, {"#/channels/1", "Website"}, {"#/conversations", "Conversations"},
		{"#/analytics", "Analytics"}, {"#/members", "Members of Acme"},
	} {
		c.open(page.hash, 360, 740)
		c.heading(page.title)
		c.poll(page.hash+" loaded", `!document.querySelector("main").hasAttribute("aria-busy")`)
		c.accessible(page.hash + " at 360 px")
		if page.hash == "#/channels/1" {
			screenshot(t, ctx, shots, "console-mobile.png") // the screen, not the whole page
		}
	}

	// The keyboard reaches the navigation, and a destructive action asks
	// first: Cancel keeps the channel.
	c.open("#/channels/1", 1000, 700)
	c.heading("Website")
	c.press("Delete channel")
	c.poll("the question", `!!document.querySelector("dialog[open]")`)
	if f := eval[string](t, ctx, `document.activeElement.textContent`); f != "Cancel" {
		t.Errorf("the dialog focuses %q, want Cancel", f)
	}
	c.press("Cancel")
	s.Must(t, 200, "GET", "/api/channels/1", s.Login(t, "owner@example.com", apptest.Password), nil, nil)

	c.noErrors("the journey")
	c.press("Sign out")
	c.heading("Sign in to agentline")
	if tok := eval[string](t, ctx, `sessionStorage.getItem("agentline.token") || ""`); tok != "" {
		t.Error("the token is still in sessionStorage after signing out")
	}
}

// The phone journey: buy a number for the agent on the fake carrier, place
// an outbound test call from the console, play the carrier's side of that
// call against a fake realtime model, hang up from the console, and read
// the call's transcript on its page.
func TestConsolePhoneJourney(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	carrier := twiliofake.New(twiliofake.Options{})
	defer carrier.Close()
	model := realtimefake.New("sk-test")
	defer model.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test",
		"TWILIO_ACCOUNT_SID": carrier.AccountSID(), "TWILIO_AUTH_TOKEN": carrier.AuthToken(), "TWILIO_API_BASE_URL": carrier.URL(),
		"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": model.URL(),
	})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "greeting": "Hello, this is Ada from Acme."}, &a)
	c := newConsole(t, ctx, s.URL)
	shots := screenshotDir(t)

	c.open("#/agents/"+itoa(a.ID)+"/phone", 1000, 760)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Ada")
	c.poll("the number search", `!!document.querySelector("form[aria-label='Search numbers']")`)
	c.fill("Search numbers", "Area code", "41")
	c.press("Search numbers")
	c.poll("the area code error", field("Search numbers", "Area code")+`.getAttribute("aria-invalid") === "true"`)
	c.fill("Search numbers", "Area code", "415")
	c.press("Search numbers")
	c.poll("numbers", `[...document.querySelectorAll("button")].some(b => b.textContent.startsWith("Buy +1415"))`)
	buy := eval[string](t, ctx, `[...document.querySelectorAll("button")].find(b => b.textContent.startsWith("Buy +1415")).textContent`)
	number := strings.TrimPrefix(buy, "Buy ")
	c.press(buy)
	// The carrier charges for the number: the console asks first.
	c.poll("the confirmation", `!!document.querySelector("dialog[open]")`)
	c.press("Buy number")
	c.poll("the number", `!!document.querySelector(".number")`)
	if got := c.text(".number b"); got != number {
		t.Errorf("number shown %q, bought %q", got, number)
	}
	if owned := carrier.Numbers(); len(owned) != 1 || owned[0].PhoneNumber != number {
		t.Fatalf("the carrier's numbers: %+v", owned)
	}

	// The test call: placed, answered by the carrier, live, hung up.
	c.fill("Place test call", "Number to call", "555")
	c.press("Place test call")
	c.poll("the to_number error", field("Place test call", "Number to call")+`.getAttribute("aria-invalid") === "true"`)
	c.fill("Place test call", "Number to call", "+14155550123")
	c.press("Place test call")
	c.poll("the call's status", `!!document.getElementById("call-status")`)
	placed := carrier.Calls()
	if len(placed) != 1 || placed[0].To != "+14155550123" || placed[0].From != number {
		t.Fatalf("calls at the carrier: %+v", placed)
	}
	stream, err := callsim.ParseTwiML(placed[0].Twiml)
	if err != nil {
		t.Fatal(err)
	}
	// The callee answers: the carrier has the call in progress, then opens
	// its stream (hung up now, it ends completed, not canceled).
	carrier.SetCallStatus(placed[0].SID, "in-progress")
	cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	call, err := callsim.Open(cctx, stream, callsim.Options{Server: s.URL, CallSID: placed[0].SID, EchoMarks: true, AuthToken: carrier.AuthToken()})
	if err != nil {
		t.Fatal(err)
	}
	defer call.Close()
	ss, err := model.Next(cctx)
	if err != nil {
		t.Fatal(err)
	}
	ss.Send(cctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_1", "transcript": "Hello, this is Ada from Acme."})
	ss.Send(cctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_2", "transcript": "Hi Ada, is my order on its way?"})
	ss.Send(cctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_3", "transcript": "Yes, it ships tomorrow."})
	c.poll("in progress", `document.getElementById("call-status").textContent === "in-progress"`)
	c.shot(shots, "console-agent-phone.png")
	c.press("Hang up")
	c.poll("the end", `document.getElementById("call-status").textContent.startsWith("completed")`)
	select {
	case <-call.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the carrier's stream is still open after hanging up")
	}

	// The call's page: its transcript.
	c.press(placed[0].SID)
	c.heading("Call to +14155550123")
	c.poll("the transcript", `document.querySelectorAll(".transcript li").length >= 3`)
	tr := c.text(".transcript")
	for _, want := range []string{"Agent:Hello, this is Ada from Acme.", "Caller:Hi Ada, is my order on its way?", "Agent:Yes, it ships tomorrow."} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q: %q", want, tr)
		}
	}
	c.shot(shots, "console-call.png")
	c.press("← Conversations")
	c.heading("Conversations")
	c.poll("the call in the list", `document.querySelector("main table") && document.querySelector("main table").innerText.includes("Phone call")`)

	c.noErrors("the call")

	// Releasing asks first; Cancel keeps the number, Release lets it go.
	c.open("#/agents/"+itoa(a.ID)+"/phone", 1000, 760)
	c.poll("the number", `!!document.querySelector(".number")`)
	c.press("Release number")
	c.press("Cancel")
	if len(carrier.Released()) != 0 {
		t.Fatal("Cancel released the number")
	}
	c.press("Release number")
	c.poll("the question", `!!document.querySelector("dialog[open]")`)
	c.press("Release number")
	c.poll("the number search again", `!!document.querySelector("form[aria-label='Search numbers']")`)
	if r := carrier.Released(); len(r) != 1 || r[0].PhoneNumber != number {
		t.Errorf("released at the carrier: %+v", r)
	}
	c.noErrors("the release")
}
