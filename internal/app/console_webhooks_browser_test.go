package app_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// hookReceiver keeps every request it gets and answers status.
type hookReceiver struct {
	status int
	mu     sync.Mutex
	got    []*http.Request
	bodies [][]byte
}

func (rc *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got, rc.bodies = append(rc.got, r), append(rc.bodies, b)
	rc.mu.Unlock()
	w.WriteHeader(rc.status)
}

// untilAPI asks the API for path every 50 ms until ok says its answer is
// what the test waits for (at most 30 s).
func untilAPI[T any](t *testing.T, s *apptest.Server, tok, path, what string, ok func(T) bool) T {
	t.Helper()
	for range 600 {
		var v T
		s.Must(t, 200, "GET", path, tok, nil, &v)
		if ok(v) {
			return v
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("waiting for %s: never", what)
	panic("unreachable")
}

type deliveryList struct {
	Deliveries []agentline.WebhookDelivery `json:"deliveries"`
}

// The console's webhook pages in a real browser against the real API and
// job queue: an endpoint made in the form shows its whole secret until
// dismissed (which verifies the delivery with the official Standard Webhooks
// library), a test event is sent and its delivery and attempt shown, the
// delivery retried, the secret rotated, the endpoint turned off and
// deleted; an endpoint whose receiver answered 410 is marked disabled by
// agentline, with why, in the list and on its page. axe-core finds nothing
// serious on either page.
func TestConsoleWebhooks(t *testing.T) {
	t.Parallel()
	source := axeSource(t)
	ctx := newBrowser(t)
	ok, gone := &hookReceiver{status: 204}, &hookReceiver{status: 410}
	okSrv, goneSrv := httptest.NewServer(ok), httptest.NewServer(gone)
	defer okSrv.Close()
	defer goneSrv.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true", "AGENTLINE_WEBHOOK_RETRY_SPAN": "1h"})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	// The endpoint that answers 410, made through the API and tested: it
	// ends disabled by agentline.
	var old agentline.WebhookEndpoint
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", tok, map[string]any{"url": goneSrv.URL + "/old", "description": "Old CRM"}, &old)
	s.Must(t, 202, "POST", "/api/webhooks/"+itoa(old.ID)+"/test", tok, nil, nil)
	untilAPI(t, s, tok, "/api/webhooks/"+itoa(old.ID), "the 410 endpoint disabled", func(w agentline.WebhookEndpoint) bool { return !w.Enabled })

	c := newConsole(t, ctx, s.URL)
	code := source
	shots := screenshotDir(t)
	c.open("#/webhooks", 1000, 800)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Webhooks")
	c.poll("the disabled endpoint marked", `[...document.querySelectorAll("main tr")].some(r => r.textContent.includes("Old CRM") && r.textContent.includes("Disabled by agentline") && r.textContent.includes("410"))`)
	c.accessible("webhooks")
	c.axeCheck(code, "#/webhooks")

	// The events field names the server's event types (GET /api/catalog).
	hint := eval[string](t, ctx, `(el => document.getElementById(el.getAttribute("aria-describedby").split(" ")[1]).textContent)(`+field("New endpoint", "Events")+`)`)
	for _, e := range agentline.EventTypes() {
		if !strings.Contains(hint, e) {
			t.Errorf("the events hint %q lacks %s", hint, e)
		}
	}

	// A new endpoint, from the form.
	c.fill("New endpoint", "URL", okSrv.URL+"/hooks")
	c.fill("New endpoint", "Events", "lead.created\nwebhook.test")
	c.fill("New endpoint", "Description", "CRM sync")
	c.press("Add endpoint")
	c.heading("CRM sync")
	secret := c.text("#whole-secret")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the secret on screen: %q", secret)
	}
	var list struct {
		Webhooks []agentline.WebhookEndpoint `json:"webhooks"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/webhooks", tok, nil, &list)
	if len(list.Webhooks) != 2 || list.Webhooks[1].URL != okSrv.URL+"/hooks" || strings.Join(list.Webhooks[1].Events, ",") != "lead.created,webhook.test" {
		t.Fatalf("the endpoints: %+v", list.Webhooks)
	}
	hook := list.Webhooks[1]

	// A test event, delivered, with its attempt.
	c.press("Send test event")
	c.poll("queued", `document.querySelector("#deliveries p[role=status]").textContent === "Test event queued."`)
	untilAPI(t, s, tok, "/api/webhooks/"+itoa(hook.ID)+"/deliveries", "the test delivered", func(l deliveryList) bool {
		return len(l.Deliveries) == 1 && l.Deliveries[0].Status == agentline.DeliveryDelivered
	})
	c.press("Refresh")
	c.poll("the delivery shown", `(r => !!r && r.textContent.includes("webhook.test") && r.textContent.includes("delivered") && r.textContent.includes("(204)"))(document.querySelector("#deliveries tr[data-delivery]"))`)
	// The secret stays on screen through the redraw until dismissed.
	if got := c.text("#whole-secret"); got != secret {
		t.Errorf("after Refresh the secret on screen is %q", got)
	}
	c.press("Dismiss")
	c.poll("the secret dismissed", `!document.getElementById("whole-secret")`)
	eval[any](t, ctx, `document.querySelector("#deliveries summary").click()`)
	c.poll("the attempt", `(l => !!l && l.textContent.startsWith("HTTP 204"))(document.querySelector("#deliveries ol.attempts li"))`)
	c.accessible("webhook")
	c.axeCheck(code, "#/webhooks/"+itoa(hook.ID))
	c.shot(shots, "console-webhook.png")

	// What the receiver got verifies with the secret shown, by the
	// official library.
	ok.mu.Lock()
	if len(ok.got) != 1 {
		t.Errorf("the receiver got %d requests, want 1", len(ok.got))
	} else if wh, err := standardwebhooks.NewWebhook(secret); err != nil {
		t.Error(err)
	} else if err := wh.Verify(ok.bodies[0], ok.got[0].Header); err != nil {
		t.Errorf("the delivery does not verify with the secret shown: %v", err)
	}
	ok.mu.Unlock()

	// Retry the delivered delivery, rotate the secret, turn the endpoint
	// off, as a person does on its page.
	c.press("Retry")
	c.poll("the retry queued", `document.querySelector("#deliveries p[role=status]").textContent.includes("queued again")`)
	untilAPI(t, s, tok, "/api/webhooks/"+itoa(hook.ID)+"/deliveries", "the retry delivered", func(l deliveryList) bool {
		return len(l.Deliveries) == 1 && l.Deliveries[0].Status == agentline.DeliveryDelivered && l.Deliveries[0].Attempts == 2
	})
	c.press("Rotate secret")
	c.press("Rotate secret") // the dialog's
	c.poll("the new secret", `(e => !!e && e.textContent.startsWith("whsec_") && e.textContent !== `+js(secret)+`)(document.getElementById("whole-secret"))`)
	c.poll("the overlap", `document.getElementById("secret").textContent.includes("previous secret also signs until")`)
	c.fill("Endpoint settings", "Enabled", "false")
	c.press("Save endpoint")
	c.poll("disabled", `(p => !!p && p.textContent === "Disabled")(document.querySelector("main > p .status"))`)
	untilAPI(t, s, tok, "/api/webhooks/"+itoa(hook.ID), "the endpoint off", func(w agentline.WebhookEndpoint) bool { return !w.Enabled && w.DisabledReason == "" })

	// The disabled endpoint's page says why.
	c.open("#/webhooks/"+itoa(old.ID), 1000, 800)
	c.heading("Old CRM")
	c.poll("the reason", `[...document.querySelectorAll("main .notice.error")].some(n => n.textContent.includes("agentline disabled this endpoint") && n.textContent.includes("410"))`)
	c.axeCheck(code, "#/webhooks/"+itoa(old.ID))
	c.shot(shots, "console-webhook-disabled.png")
	c.open("#/webhooks", 1000, 800)
	c.heading("Webhooks")
	c.poll("both endpoints listed", `document.querySelectorAll("main tbody tr").length === 2`)
	c.shot(shots, "console-webhooks.png")

	// Deleting one, after the question.
	c.open("#/webhooks/"+itoa(hook.ID), 1000, 800)
	c.heading("CRM sync")
	c.press("Delete endpoint")
	c.press("Delete endpoint") // the dialog's
	c.heading("Webhooks")
	c.poll("one endpoint left", `document.querySelectorAll("main tbody tr").length === 1`)
	s.Must(t, 404, "GET", "/api/webhooks/"+itoa(hook.ID), tok, nil, nil)
	c.noErrors("webhooks")
}
