package cluster_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// leadReceiver is a form's notify_url: it answers 500 while failing is
// set, and counts the attempts and the leads it accepted.
type leadReceiver struct {
	mu       sync.Mutex
	failing  bool
	attempts int
	accepted map[int64]int
}

func (rc *leadReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p struct {
		Event string
		Lead  struct{ ID int64 }
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	json.Unmarshal(body, &p)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.attempts++
	if rc.failing || p.Event != "lead.created" {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	rc.accepted[p.Lead.ID]++
	w.WriteHeader(http.StatusNoContent)
}

func (rc *leadReceiver) state() (attempts int, accepted map[int64]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[int64]int{}
	for k, v := range rc.accepted {
		out[k] = v
	}
	return rc.attempts, out
}

// A lead's notify_url delivery survives a kill -9: the lead is submitted,
// its first attempt reaches the receiver (which answers 500), and the
// instance is killed then (SIGKILL: no drain, nothing flushed), typically
// before it recorded the attempt, so the job stays "running"; the receiver
// recovers, and the restarted instance delivers the lead, once, when River
// rescues the job (AGENTLINE_JOB_RESCUE_AFTER, 15 s here). On SQLite and
// on PostgreSQL, with the real binary.
func TestNotifyURLSurvivesKill(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, d)
			env := startFakes(t).env(dbURL, "")
			env["AGENTLINE_ALLOW_PRIVATE_WEBHOOKS"] = "true"
			env["AGENTLINE_JOB_RESCUE_AFTER"] = "15s" // should the kill land mid-attempt
			i := start(t, "a", env)
			fx := setup(t, i, dbURL)
			rc := &leadReceiver{failing: true, accepted: map[int64]int{}}
			srv := httptest.NewServer(rc)
			t.Cleanup(srv.Close)
			var ch struct{ ID int64 }
			i.Must(t, 201, "POST", "/api/projects/"+itoa(fx.project.ID)+"/channels", fx.token, map[string]any{"type": "form", "name": "Contact",
				"settings": map[string]any{"form": map[string]string{"mode": "lead_capture", "notify_url": srv.URL + "/leads"}}}, &ch)
			var lead struct {
				LeadID int64 `json:"lead_id"`
			}
			i.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(ch.ID), "", map[string]string{"name": "Ada", "email": "ada@example.com"}, &lead)
			waitFor(t, 30*time.Second, "a failed attempt", func() bool { n, _ := rc.state(); return n > 0 })
			i.signal(t, syscall.SIGKILL)
			i.wait(t, 10*time.Second)
			rc.mu.Lock()
			rc.failing = false
			rc.mu.Unlock()
			if _, acc := rc.state(); len(acc) != 0 {
				t.Fatalf("delivered before the kill: %v", acc)
			}
			i.run(t)
			took := waitFor(t, 2*time.Minute, "the lead delivered after the restart", func() bool { _, acc := rc.state(); return acc[lead.LeadID] > 0 })
			time.Sleep(2 * time.Second) // a moment for a duplicate to show
			attempts, acc := rc.state()
			if len(acc) != 1 || acc[lead.LeadID] != 1 {
				t.Errorf("accepted %v, want lead %d once", acc, lead.LeadID)
			}
			t.Logf("lead %d delivered %v after the restart; %d attempts in all", lead.LeadID, took.Round(time.Millisecond), attempts)
		})
	}
}
