package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// apiKeysShots is where the journey's screenshots go: AGENTLINE_APIKEYS_SHOTS,
// or as every browser test's.
func apiKeysShots(t *testing.T) string {
	if d := os.Getenv("AGENTLINE_APIKEYS_SHOTS"); d != "" {
		return d
	}
	return screenshotDir(t)
}

// The API keys card on the projects page: an owner makes a key with a
// name, role and expiry, sees it whole once with Copy, and afterwards only
// its prefix; the key's use shows as its last use; the owner revokes it
// after confirming, and the key is refused at once with its reason. An
// editor sees the list without the form or the Revoke buttons.
func TestConsoleAPIKeys(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	shots := apiKeysShots(t)
	axe := axeSource(t)
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
	_, editorTok := s.NewUser(t, "ed@example.com")
	s.Join(t, tok, p.ID, editorTok, "ed@example.com", agentline.RoleEditor)

	c := newConsole(t, ctx, s.URL)
	c.open("#/projects", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Projects")
	c.poll("the card", `!!document.querySelector("#api-keys form")`)
	c.shot(shots, "apikeys-empty.png")
	c.cardShot(shots, "apikeys-empty-card.png", "#api-keys")

	// Make a key: a name is required; then shown whole once, with Copy.
	const form = "Create an API key"
	c.press("Create key")
	c.poll("the missing name", `(`+field(form, "Key name")+`).getAttribute("aria-describedby") !== null && document.getElementById((`+field(form, "Key name")+`).getAttribute("aria-describedby").split(" ")[0]).textContent !== ""`)
	if msg := c.fieldError(form, "Key name"); !strings.Contains(msg, "name is required") {
		t.Errorf("no name: %q", msg)
	}
	expires := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
	c.fill(form, "Key name", "deploy bot")
	c.fill(form, "Key role", "editor")
	c.fill(form, "Expires (optional)", expires)
	c.press("Create key")
	c.poll("the key shown", `(e => !!e && e.textContent.startsWith("agl_sk_"))(document.getElementById("api-key-shown"))`)
	key := c.text("#api-key-shown")
	prefix := key[:len(agentline.APIKeyPrefix)+6]
	c.poll("the key listed", `!!document.querySelector("#api-keys [data-api-key='`+prefix+`']")`)
	c.shot(shots, "apikeys-created.png")
	c.cardShot(shots, "apikeys-created-card.png", "#api-keys")
	c.accessible("the projects page with a new key")
	c.axeCheck(axe, "the projects page with a new key")
	if v := eval[string](t, ctx, `[...document.querySelectorAll("#api-keys input")].map(i => i.value).join("|")`); v != "|" {
		t.Errorf("the form kept its values after creating: %q", v)
	}
	if focused := eval[string](t, ctx, `document.activeElement.id`); focused != "api-key-made" {
		t.Errorf("the focus after creating is on %q, not on the new key", focused)
	}
	c.press("Copy key")
	c.poll("the copy", `[...document.querySelectorAll("#api-keys button")].some(b => b.textContent === "Copied" || b.textContent === "Selected: press Ctrl+C")`)
	row := func() []string {
		return eval[[]string](t, ctx, `[...document.querySelectorAll("#api-keys [data-api-key='`+prefix+`'] td")].map(td => td.textContent)`)
	}
	if r := row(); len(r) < 5 || r[0] != "deploy bot" || r[1] != "editor" || r[2] != prefix+"…" || r[3] != "never" ||
		!strings.HasPrefix(r[4], "expires "+expires) {
		t.Errorf("the new key's row: %q", r)
	}

	// Dismissed, the key is gone from the page; used once, its last use
	// shows after a reload, and the key never again.
	c.press("Dismiss")
	c.poll("the key dismissed", `!document.getElementById("api-key-shown") && !!document.querySelector("#api-keys [data-api-key='`+prefix+`']")`)
	if strings.Contains(eval[string](t, ctx, `document.documentElement.outerHTML`), key) {
		t.Error("the key is on the page after Dismiss")
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/agents", key, nil, nil)
	c.reload()
	c.heading("Projects")
	c.poll("the list", `!!document.querySelector("#api-keys [data-api-key='`+prefix+`']")`)
	if r := row(); len(r) < 4 || !strings.HasSuffix(r[3], " UTC") {
		t.Errorf("last used after a request: %q", r)
	}
	if strings.Contains(eval[string](t, ctx, `document.documentElement.outerHTML`), key) {
		t.Error("the key is on the page after a reload")
	}
	c.shot(shots, "apikeys-used.png")
	// On a phone's screen the list scrolls inside its card.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	c.accessible("the projects page on a phone")
	c.cardShot(shots, "apikeys-phone-card.png", "#api-keys")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 900)); err != nil {
		t.Fatal(err)
	}
	c.cardShot(shots, "apikeys-used-card.png", "#api-keys")

	// Revoked after confirming; refused at once, with why.
	eval[any](t, ctx, `document.getElementById("api-keys").scrollIntoView()`)
	c.press("Revoke the key deploy bot")
	c.poll("the confirmation", `!!document.querySelector("dialog[open]")`)
	screenshot(t, ctx, shots, "apikeys-revoke-confirm.png")
	c.axeCheck(axe, "the confirmation of a revocation")
	c.press("Revoke key")
	c.poll("revoked", `document.getElementById("api-keys-said").textContent.includes("is revoked")`)
	if r := row(); len(r) < 6 || !strings.HasPrefix(r[4], "revoked ") || strings.TrimSpace(r[5]) != "" {
		t.Errorf("the revoked key's row: %q", r)
	}
	if focused := eval[string](t, ctx, `document.activeElement.id`); focused != "api-keys-said" {
		t.Errorf("the focus after revoking is on %q", focused)
	}
	c.shot(shots, "apikeys-revoked.png")
	c.cardShot(shots, "apikeys-revoked-card.png", "#api-keys")
	r := s.Do(t, "GET", "/api/projects/"+itoa(p.ID)+"/agents", key, nil)
	if r.Status != 401 || !strings.Contains(r.String(), "API key revoked") {
		t.Errorf("the revoked key: %d %s", r.Status, r.String())
	}
	c.noErrors("the owner's projects page")

	// An editor sees the keys but cannot make or revoke one.
	eval[any](t, ctx, `sessionStorage.clear()`)
	c.reload()
	c.signIn("ed@example.com", apptest.Password)
	c.heading("Projects")
	c.poll("the editor's card", `!!document.querySelector("#api-keys [data-api-key='`+prefix+`']")`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#api-keys form, #api-keys button").length`); n != 0 {
		t.Errorf("the editor sees %d forms or buttons on the card", n)
	}
	c.shot(shots, "apikeys-editor.png")
	c.cardShot(shots, "apikeys-editor-card.png", "#api-keys")
	c.noErrors("the editor's projects page")
}

// reload loads the page again, as the browser's Reload does: the console
// starts afresh, with what it keeps in sessionStorage.
func (c console) reload() {
	c.t.Helper()
	if err := chromedp.Do(c.ctx, chromedp.Reload()); err != nil {
		c.t.Fatal(err)
	}
}

// cardShot saves a screenshot of the element selector (a card), larger
// than a whole page's to look at.
func (c console) cardShot(dir, name, selector string) {
	c.t.Helper()
	png, err := chromedp.Run(c.ctx, chromedp.Screenshot(chromedp.CSS(selector)))
	if err != nil {
		c.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		c.t.Fatal(err)
	}
}
