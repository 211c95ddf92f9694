package cluster_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// hookReceiver is one loopback webhook receiver: it verifies every request
// with the official Go library (one that does not verify fails the test),
// answers fail() ? 500 : 204, and counts what it got by webhook-id.
type hookReceiver struct {
	t        *testing.T
	wh       *standardwebhooks.Webhook
	fail     func() bool
	requests atomic.Int64
	mu       sync.Mutex
	seen     map[string]bool  // every webhook-id that came
	ok       map[string]int   // 2xx answers by webhook-id
	leads    map[string]int64 // the lead of each webhook-id
}

func (rc *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.requests.Add(1)
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := rc.wh.Verify(body, r.Header); err != nil {
		rc.t.Errorf("a delivery does not verify: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	rc.mu.Lock()
	rc.seen[r.Header.Get("webhook-id")] = true
	rc.mu.Unlock()
	if rc.fail != nil && rc.fail() {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	var ev struct {
		Type string
		Data struct {
			Lead struct{ ID int64 }
		}
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Type != "lead.created" {
		rc.t.Errorf("delivery %s: type %q, %v", body, ev.Type, err)
	}
	id := r.Header.Get("webhook-id")
	rc.mu.Lock()
	rc.ok[id]++
	rc.leads[id] = ev.Data.Lead.ID
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// counts is the number of distinct events delivered, and of 2xx answers
// beyond the first of an event (duplicates).
func (rc *hookReceiver) counts() (events, dups int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, n := range rc.ok {
		dups += n - 1
	}
	return len(rc.ok), dups
}

// webhookSetup makes, through instance i, an owner's project with a form
// channel and a webhook endpoint (lead.created) pointing at a new loopback
// receiver; it returns the receiver and the channel's id.
func webhookSetup(t *testing.T, i *instance) (*hookReceiver, int64) {
	t.Helper()
	rc := &hookReceiver{t: t, seen: map[string]bool{}, ok: map[string]int{}, leads: map[string]int64{}}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	tok := i.Login(t, ownerEmail, ownerPassword)
	var p struct{ ID int64 }
	i.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	var ch struct{ ID int64 }
	i.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "form", "name": "Contact"}, &ch)
	var hook struct{ Secret string }
	i.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", tok, map[string]any{"url": srv.URL + "/hook", "events": []string{"lead.created"}}, &hook)
	wh, err := standardwebhooks.NewWebhook(hook.Secret)
	if err != nil {
		t.Fatal(err)
	}
	rc.wh = wh
	return rc, ch.ID
}

// webhookEnv is the settings of the instances of these tests.
func webhookEnv(t *testing.T, dbURL, span string) map[string]string {
	env := startFakes(t).env(dbURL, "")
	env["AGENTLINE_ALLOW_PRIVATE_WEBHOOKS"] = "true"
	env["AGENTLINE_WEBHOOK_RETRY_SPAN"] = span
	env["AGENTLINE_FORM_SUBMITS_PER_MINUTE"] = "1000000"
	return env
}

// submitLeads submits n leads to the form channel, alternating between the
// instances, from 4 clients at once; it returns the leads' ids.
func submitLeads(t *testing.T, n int, channel int64, is ...*instance) map[int64]bool {
	t.Helper()
	var mu sync.Mutex
	ids := map[int64]bool{}
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 4 {
		wg.Go(func() {
			for k := next.Add(1) - 1; k < int64(n); k = next.Add(1) - 1 {
				var lead struct {
					LeadID int64 `json:"lead_id"`
				}
				i := is[k%int64(len(is))]
				r := i.Do(t, "POST", "/api/channels/form/submit/"+itoa(channel), "", map[string]any{"name": "Lead " + itoa(k), "email": "lead@example.com"})
				if r.Status != 201 {
					t.Errorf("submit %d to %s: %s", k, i.name, r)
					return
				}
				r.JSON(t, &lead)
				mu.Lock()
				ids[lead.LeadID] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return ids
}

// untilDelivered waits, up to d, until rc got want distinct events.
func untilDelivered(t *testing.T, rc *hookReceiver, want int, d time.Duration) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	for {
		if n, _ := rc.counts(); n >= want {
			return time.Since(start)
		}
		select {
		case <-ctx.Done():
			n, _ := rc.counts()
			t.Fatalf("%d of %d events delivered within %v (%d requests)", n, want, d, rc.requests.Load())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sameLeads checks that the events delivered are those of the leads.
func sameLeads(t *testing.T, rc *hookReceiver, leads map[int64]bool) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	got := map[int64]bool{}
	for _, id := range rc.leads {
		if !leads[id] {
			t.Errorf("an event for lead %d, which was not submitted", id)
		}
		got[id] = true
	}
	if len(got) != len(leads) {
		t.Errorf("events for %d leads, %d submitted", len(got), len(leads))
	}
}

// Two instances on one PostgreSQL deliver the lead.created events of 400
// leads submitted across both to one receiver: every event delivered and
// verified, each exactly once (nothing failed, so no request repeats).
func TestWebhooksFromTwoInstances(t *testing.T) {
	t.Parallel()
	const leads = 1000
	dbURL := storetest.URL(t, store.Postgres)
	env := webhookEnv(t, dbURL, "1h")
	a, b := start(t, "a", env), start(t, "b", env)
	rc, channel := webhookSetup(t, a)
	submitted := submitLeads(t, leads, channel, a, b)
	took := untilDelivered(t, rc, leads, 3*time.Minute)
	// A moment for any duplicate to show, then count.
	time.Sleep(2 * time.Second)
	events, dups := rc.counts()
	if dups != 0 || rc.requests.Load() != leads {
		t.Errorf("%d events, %d duplicates, %d requests; want %d, 0, %d", events, dups, rc.requests.Load(), leads, leads)
	}
	sameLeads(t, rc, submitted)
	t.Logf("%d leads through a and b: %d events delivered and verified in %v after the last submit, %d requests, %d duplicates",
		leads, events, took.Round(time.Millisecond), rc.requests.Load(), dups)
}

// Instance a is killed (SIGKILL) while every event is pending (the
// receiver answers 500 until then), then restarted: every event is
// delivered, none lost. With the receiver failing until the kill, no 2xx
// was answered to an attempt the killed instance could not record, so
// duplicates are not expected; any are counted and reported. Jobs a was
// running at the kill stay "running" until River rescues them (after
// AGENTLINE_JOB_RESCUE_AFTER, 15 s here), which bounds the wait.
func TestWebhooksSurviveKill(t *testing.T) {
	t.Parallel()
	const leads = 1000
	dbURL := storetest.URL(t, store.Postgres)
	env := webhookEnv(t, dbURL, "10m") // retries after about 12 ms, 70 ms, 280 ms, 1.4 s, 8 s, then 50 s
	// Jobs a was running at the kill are rescued after 15 s, not 5 min.
	env["AGENTLINE_JOB_RESCUE_AFTER"] = "15s"
	a, b := start(t, "a", env), start(t, "b", env)
	var failing atomic.Bool
	failing.Store(true)
	rc, channel := webhookSetup(t, a)
	rc.fail = failing.Load
	submitted := submitLeads(t, leads, channel, a, b)

	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	jobs := openDB(t, ctx, dbURL).JobPool()
	pending := func() (n int) {
		if err := jobs.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Every event attempted at least once and failed: all pending.
	waitFor(t, 2*time.Minute, "an attempt of every event", func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return len(rc.seen) == leads
	})
	if n := pending(); n != leads {
		t.Fatalf("%d deliveries pending before the kill, want %d", n, leads)
	}
	failedBefore := rc.requests.Load()
	a.signal(t, syscall.SIGKILL)
	a.wait(t, 10*time.Second)
	failing.Store(false)
	running := func() (n int) {
		if err := jobs.QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE state = 'running'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	atKill := running()
	// b's own jobs finish in moments; what is still running then is a's,
	// left behind by the kill, until River rescues it.
	time.Sleep(3 * time.Second)
	stuck := running()
	a.run(t)
	// Every event but those of a's stuck jobs goes through without them.
	rest := untilDelivered(t, rc, leads-stuck, 2*time.Minute)
	took := untilDelivered(t, rc, leads, 8*time.Minute)
	time.Sleep(2 * time.Second)
	events, dups := rc.counts()
	if n := pending(); n != 0 {
		t.Errorf("%d deliveries still pending", n)
	}
	sameLeads(t, rc, submitted)
	t.Logf("%d leads; %d failed attempts before a was killed with all %d pending; jobs running: %d just after the kill, %d (a's, stuck) 3 s later; "+
		"after a's restart all but those %d delivered in %v, every event in %v: %d events, %d duplicates, %d requests in all",
		leads, failedBefore, leads, atKill, stuck, stuck, rest.Round(time.Millisecond), took.Round(time.Millisecond), events, dups, rc.requests.Load())
	if dups > atKill {
		t.Errorf("%d duplicates, more than the %d jobs running at the kill", dups, atKill)
	}
}
