package webhooks_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store/storetest"
)

// hit is one request a verifyingReceiver got.
type hit struct {
	id      string // webhook-id
	subject string // data.subject of the test events, "" otherwise
	status  int    // what the receiver answered
}

// verifyingReceiver checks every request with the official Go verifier
// (a request that does not verify is an error of the test) and answers
// with decide's status; decide may block (it gets the request's context).
type verifyingReceiver struct {
	t      *testing.T
	wh     *standardwebhooks.Webhook
	decide func(ctx context.Context, id string, attempt int) int
	mu     sync.Mutex
	hits   []hit
	tries  map[string]int
}

func (rc *verifyingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := rc.wh.Verify(body, r.Header); err != nil {
		rc.t.Errorf("a delivery does not verify: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev struct {
		Data struct {
			Subject string `json:"subject"`
		} `json:"data"`
	}
	json.Unmarshal(body, &ev)
	id := r.Header.Get("webhook-id")
	rc.mu.Lock()
	rc.tries[id]++
	n := rc.tries[id]
	rc.mu.Unlock()
	status := http.StatusNoContent
	if rc.decide != nil {
		status = rc.decide(r.Context(), id, n)
	}
	rc.mu.Lock()
	rc.hits = append(rc.hits, hit{id, ev.Data.Subject, status})
	rc.mu.Unlock()
	w.WriteHeader(status)
}

// delivered is the number of distinct webhook-ids answered 2xx, and the
// number of 2xx answers beyond one per id (duplicates).
func (rc *verifyingReceiver) delivered() (ids, dups int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	seen := map[string]bool{}
	for _, h := range rc.hits {
		if h.status/100 != 2 {
			continue
		}
		if seen[h.id] {
			dups++
		}
		seen[h.id] = true
	}
	return len(seen), dups
}

func (rc *verifyingReceiver) snapshot() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// hookOn adds an endpoint for rc (a loopback server) to project and sets
// rc's verifier from its secret.
func hookOn(t *testing.T, s *apptest.Server, tok string, project int64, rc *verifyingReceiver) int64 {
	t.Helper()
	rc.t, rc.tries = t, map[string]int{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	var hook struct {
		ID     int64  `json:"id"`
		Secret string `json:"secret"`
	}
	s.Must(t, 201, "POST", "/api/projects/"+itoa(project)+"/webhooks", tok, map[string]any{"url": srv.URL + "/hook"}, &hook)
	wh, err := standardwebhooks.NewWebhook(hook.Secret)
	if err != nil {
		t.Fatal(err)
	}
	rc.wh = wh
	return hook.ID
}

// eventually polls cond every 20 ms until it holds or ctx ends.
func eventually(ctx context.Context, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return cond()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// An endpoint that never answers does not hold up another: with both
// subscribed to lead.created, the fast one gets every lead's event (each
// once, verified) while requests to the hanging one are still open.
func TestHangingEndpointDoesNotHoldUpAnother(t *testing.T) {
	const leads = 40
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			release := make(chan struct{})
			hang := &verifyingReceiver{decide: func(ctx context.Context, _ string, _ int) int {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return http.StatusServiceUnavailable
			}}
			fast := &verifyingReceiver{}
			s := apptest.StartFresh(t, d, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
				"AGENTLINE_WEBHOOK_RETRY_SPAN": "1h", "AGENTLINE_FORM_SUBMITS_PER_MINUTE": "100000"})
			_, tok := s.NewUser(t, "owner@example.com")
			var p struct{ ID int64 }
			s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
			hookOn(t, s, tok, p.ID, hang) // the older endpoint: its deliveries come first
			hookOn(t, s, tok, p.ID, fast)
			t.Cleanup(func() { close(release) }) // before the servers stop
			var ch struct{ ID int64 }
			s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "form", "name": "Contact"}, &ch)
			for i := range leads {
				s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(ch.ID), "", map[string]any{"name": "Lead " + itoa(int64(i)), "email": "lead@example.com"}, nil)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if !eventually(ctx, func() bool { n, _ := fast.delivered(); return n == leads }) {
				n, _ := fast.delivered()
				t.Fatalf("the fast endpoint got %d of %d events", n, leads)
			}
			n, dups := fast.delivered()
			hanging := 0
			hang.mu.Lock()
			for _, c := range hang.tries {
				hanging += c
			}
			answered := len(hang.hits)
			hang.mu.Unlock()
			if dups != 0 {
				t.Errorf("the fast endpoint got %d duplicates", dups)
			}
			if answered != 0 {
				t.Errorf("the hanging endpoint answered %d requests before its release", answered)
			}
			t.Logf("fast endpoint: %d/%d events, %d duplicates; hanging endpoint: %d requests open, none answered", n, leads, dups, hanging)
		})
	}
}

// Events of one subject reach an endpoint in the order they happened: the
// receiver fails the first event three times; the second and third (same
// subject) arrive only after the first succeeded, each after the one
// before it; an event of another subject is not held up by them.
func TestEventsOfOneSubjectInOrder(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			var first string
			var mu sync.Mutex
			rc := &verifyingReceiver{decide: func(_ context.Context, id string, attempt int) int {
				mu.Lock()
				defer mu.Unlock()
				if id == first && attempt <= 3 {
					return http.StatusInternalServerError
				}
				return http.StatusOK
			}}
			s := apptest.StartFresh(t, d, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true", "AGENTLINE_WEBHOOK_RETRY_SPAN": "1h"})
			_, tok := s.NewUser(t, "owner@example.com")
			var p struct{ ID int64 }
			s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)
			hookOn(t, s, tok, p.ID, rc)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			emit := func(subject string, seq int) string {
				ev, err := agentline.NewEvent(p.ID, agentline.EventLeadCreated, subject, map[string]any{"subject": subject, "seq": seq})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.App.Store.WithOutbox(ctx, func(ctx context.Context, out agentline.Outbox) error { return out.Emit(ctx, ev) }); err != nil {
					t.Fatal(err)
				}
				return ev.ID
			}
			mu.Lock()
			first = "pending" // no event is failed until the first is known
			mu.Unlock()
			ids := make([]string, 3)
			for i := range ids {
				id := emit("lead:7", i)
				if i == 0 {
					mu.Lock()
					first = id
					mu.Unlock()
				}
				ids[i] = id
			}
			other := emit("lead:8", 0)
			if !eventually(ctx, func() bool { n, _ := rc.delivered(); return n == 4 }) {
				n, _ := rc.delivered()
				t.Fatalf("%d of 4 events delivered", n)
			}
			hits := rc.snapshot()
			// Where each event of lead:7 was first sent and first delivered.
			firstSent, delivered := map[string]int{}, map[string]int{}
			for i, h := range hits {
				if _, ok := firstSent[h.id]; !ok {
					firstSent[h.id] = i
				}
				if _, ok := delivered[h.id]; !ok && h.status/100 == 2 {
					delivered[h.id] = i
				}
			}
			for i := 1; i < len(ids); i++ {
				if firstSent[ids[i]] < delivered[ids[i-1]] {
					t.Errorf("event %d of lead:7 was sent (request %d) before event %d was delivered (request %d)", i+1, firstSent[ids[i]], i, delivered[ids[i-1]])
				}
			}
			rc.mu.Lock()
			tries := maps.Clone(rc.tries)
			rc.mu.Unlock()
			if n := tries[ids[0]]; n != 4 {
				t.Errorf("the first event took %d requests, want 4", n)
			}
			for _, id := range append(ids[1:], other) {
				if n := tries[id]; n != 1 {
					t.Errorf("event %s took %d requests, want 1", id, n)
				}
			}
			_, dups := rc.delivered()
			t.Logf("%d requests in all: lead:7's events delivered at requests %d, %d, %d (the first after 3 failures); lead:8's at %d; %d duplicates",
				len(hits), delivered[ids[0]], delivered[ids[1]], delivered[ids[2]], delivered[other], dups)
		})
	}
}
