package webhooks_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// receiver answers each request with the next status of answers (then
// 200), keeping what it got.
type receiver struct {
	mu      sync.Mutex
	answers []int
	got     []request
}

type request struct {
	header http.Header
	body   []byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	status := http.StatusOK
	if n := len(rc.got); n < len(rc.answers) {
		status = rc.answers[n]
	}
	rc.got = append(rc.got, request{r.Header.Clone(), b})
	rc.mu.Unlock()
	w.WriteHeader(status)
	io.WriteString(w, "answer "+strconv.Itoa(status))
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

// fixture is a running agentline with an owner, a project and a webhook
// endpoint pointing at a receiver on loopback.
type fixture struct {
	s       *apptest.Server
	tok     string
	project int64
	rc      *receiver
	hook    struct {
		ID     int64  `json:"id"`
		Secret string `json:"secret"`
	}
}

func newFixture(t *testing.T, d store.Dialect, answers []int, events []string) *fixture {
	t.Helper()
	f := &fixture{rc: &receiver{answers: answers}}
	srv := httptest.NewServer(f.rc)
	t.Cleanup(srv.Close)
	f.s = apptest.StartFresh(t, d, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true", "AGENTLINE_WEBHOOK_RETRY_SPAN": "1h"})
	_, f.tok = f.s.NewUser(t, "owner@example.com")
	var p struct{ ID int64 }
	f.s.Must(t, 201, "POST", "/api/projects", f.tok, map[string]string{"name": "Acme"}, &p)
	f.project = p.ID
	f.s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", f.tok, map[string]any{"url": srv.URL + "/hook", "events": events}, &f.hook)
	return f
}

// waitFor polls until cond holds (at most 30 s).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 3000; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

type delivery struct {
	ID       int64  `json:"id"`
	EventID  string `json:"event_id"`
	Status   string `json:"status"`
	Count    int    `json:"attempt_count"`
	Attempts []struct {
		StatusCode int    `json:"status_code"`
		Response   string `json:"response"`
	} `json:"attempts"`
}

// A lead's lead.created event reaches the endpoint once the receiver stops
// failing: it answers 500 twice, then 200; three attempts, one event, the
// same webhook-id on each, each signed so the official verifier accepts it;
// each attempt is stored.
func TestLeadCreatedRetriedUntilDelivered(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			f := newFixture(t, d, []int{500, 500}, []string{"lead.created"})
			var ch struct{ ID int64 }
			f.s.Must(t, 201, "POST", "/api/projects/"+itoa(f.project)+"/channels", f.tok, map[string]any{"type": "form", "name": "Contact"}, &ch)
			var lead struct {
				LeadID int64 `json:"lead_id"`
			}
			f.s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(ch.ID), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, &lead)
			waitFor(t, "three attempts", func() bool { return len(f.rc.requests()) >= 3 })
			var list struct{ Deliveries []delivery }
			waitFor(t, "the delivery to be delivered", func() bool {
				f.s.Must(t, 200, "GET", "/api/webhooks/"+itoa(f.hook.ID)+"/deliveries", f.tok, nil, &list)
				return len(list.Deliveries) == 1 && list.Deliveries[0].Status == "delivered"
			})
			reqs := f.rc.requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			for i, r := range reqs {
				if id := r.header.Get("webhook-id"); id != list.Deliveries[0].EventID {
					t.Errorf("attempt %d webhook-id %q, want %q", i+1, id, list.Deliveries[0].EventID)
				}
				if err := verifyGo(t, f.hook.Secret, r.header, r.body); err != nil {
					t.Errorf("attempt %d does not verify: %v", i+1, err)
				}
			}
			var got delivery
			f.s.Must(t, 200, "GET", "/api/webhooks/"+itoa(f.hook.ID)+"/deliveries/"+itoa(list.Deliveries[0].ID), f.tok, nil, &got)
			if got.Count != 3 || len(got.Attempts) != 3 || got.Attempts[0].StatusCode != 500 || got.Attempts[2].StatusCode != 200 ||
				got.Attempts[2].Response != "answer 200" {
				t.Errorf("delivery %+v", got)
			}
			// Resending a delivered event: same webhook-id again.
			f.s.Must(t, 202, "POST", "/api/webhooks/"+itoa(f.hook.ID)+"/deliveries/"+itoa(got.ID)+"/retry", f.tok, nil, nil)
			waitFor(t, "the resend", func() bool { return len(f.rc.requests()) == 4 })
			if r := f.rc.requests()[3]; r.header.Get("webhook-id") != got.EventID || verifyGo(t, f.hook.Secret, r.header, r.body) != nil {
				t.Errorf("resend headers %v", r.header)
			}
		})
	}
}

// After a rotation, a test event carries two signatures for 24 h: a
// receiver with only the old secret and one with only the new verify it
// (with the official Node library, when installed, and the Go one).
func TestRotationOverlap(t *testing.T) {
	module := nodeModule(t)
	f := newFixture(t, store.SQLite, nil, []string{"*"})
	var rotated struct {
		Secret string `json:"secret"`
	}
	f.s.Must(t, 200, "POST", "/api/webhooks/"+itoa(f.hook.ID)+"/rotate-secret", f.tok, nil, &rotated)
	if rotated.Secret == f.hook.Secret || len(rotated.Secret) < 40 {
		t.Fatalf("rotated secret %q", rotated.Secret)
	}
	f.s.Must(t, 202, "POST", "/api/webhooks/"+itoa(f.hook.ID)+"/test", f.tok, nil, nil)
	waitFor(t, "the test event", func() bool { return len(f.rc.requests()) == 1 })
	r := f.rc.requests()[0]
	for _, secret := range []string{f.hook.Secret, rotated.Secret} {
		if err := verifyGo(t, secret, r.header, r.body); err != nil {
			t.Errorf("go verifier: %v", err)
		}
		if err := verifyNode(t, module, secret, r.header, r.body); err != nil {
			t.Errorf("node verifier: %v", err)
		}
	}
}

// A receiver answering 410 Gone disables the endpoint at once; a test event
// to a disabled endpoint is a conflict.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	f := newFixture(t, store.SQLite, []int{410}, []string{"*"})
	f.s.Must(t, 202, "POST", "/api/webhooks/"+itoa(f.hook.ID)+"/test", f.tok, nil, nil)
	var ep struct {
		Enabled        bool   `json:"enabled"`
		DisabledReason string `json:"disabled_reason"`
	}
	waitFor(t, "the endpoint to be disabled", func() bool {
		f.s.Must(t, 200, "GET", "/api/webhooks/"+itoa(f.hook.ID), f.tok, nil, &ep)
		return !ep.Enabled
	})
	if ep.DisabledReason == "" || len(f.rc.requests()) != 1 {
		t.Errorf("endpoint %+v after %d requests", ep, len(f.rc.requests()))
	}
	if r := f.s.Do(t, "POST", "/api/webhooks/"+itoa(f.hook.ID)+"/test", f.tok, nil); r.Status != 409 {
		t.Errorf("test on a disabled endpoint: %s", r)
	}
}
