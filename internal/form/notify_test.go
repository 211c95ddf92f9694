package form_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/egress/egresstest"
	"github.com/agentline/agentline/internal/form"
	"github.com/agentline/agentline/internal/tools"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

func httptestServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// job is a NotifyLead job's run number attempt of max.
func job(url string, leadID int64, attempt, max int) *river.Job[form.NotifyLead] {
	return &river.Job[form.NotifyLead]{JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: max},
		Args: form.NotifyLead{URL: url, Body: []byte(`{"event":"lead.created"}`), LeadID: leadID, ChannelID: 7}}
}

// The tool facility's guard keeps notify_url off loopback unless private
// webhooks are allowed; the refusal is logged with the lead and reason, and
// the last attempt says the lead was not delivered.
func TestNotifyGuard(t *testing.T) {
	rc := newReceiver(0)
	srv := httptestServer(t, rc)
	var logs apptest.Buffer
	n := form.NewNotifier(form.NotifierOptions{Client: tools.New(nil, tools.Options{}).Client(),
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: []time.Duration{time.Millisecond}})
	if err := n.Work(context.Background(), job(srv.URL, 41, 1, 2)); err == nil {
		t.Fatal("the first attempt to loopback succeeded")
	}
	err := n.Work(context.Background(), job(srv.URL, 41, 2, 2))
	var cancel *rivertype.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("the last attempt returned %v, want the job cancelled", err)
	}
	if !strings.Contains(logs.String(), "loopback address") || !strings.Contains(logs.String(), `msg="notify: lead not delivered" lead_id=41`) ||
		!strings.Contains(logs.String(), "attempts=2") {
		t.Errorf("log:\n%s", logs.String())
	}
	if a, _ := rc.snapshot(); len(a) != 0 {
		t.Errorf("the guard let %d requests through", len(a))
	}

	allowed := form.NewNotifier(form.NotifierOptions{Client: tools.New(nil, tools.Options{AllowPrivateWebhooks: true}).Client(),
		Logger: slog.New(slog.DiscardHandler)})
	if err := allowed.Work(context.Background(), job(srv.URL, 42, 1, allowed.MaxAttempts())); err != nil {
		t.Fatalf("not delivered with private webhooks allowed: %v", err)
	}
	if allowed.MaxAttempts() != len(form.DefaultBackoff())+1 {
		t.Errorf("MaxAttempts %d", allowed.MaxAttempts())
	}
}

// holder is a notify_url endpoint that answers 200 only after hold, or
// fails at once while failing is set; it counts the deliveries it answered
// 200 to the end, so a caller that gave up is not counted.
type holder struct {
	hold      time.Duration
	mu        sync.Mutex
	failing   bool
	delivered int
}

func (h *holder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	failing := h.failing
	h.mu.Unlock()
	if failing {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	select {
	case <-time.After(h.hold):
	case <-r.Context().Done():
		return
	}
	h.mu.Lock()
	h.delivered++
	h.mu.Unlock()
}

func (h *holder) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delivered
}

// Every range of the address policy is refused when a lead is sent to its
// notify_url, whether the URL names the address or a name that resolves to
// it; the refusal is logged as blocked and nothing connects. The notifier
// sends with the tool facility's client, as the app wires it.
func TestNotifyRefusesEveryRange(t *testing.T) {
	rc := newReceiver(0)
	srv := httptestServer(t, rc)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	cases := egresstest.Refused()
	answers := map[string]netip.Addr{}
	for i, c := range cases {
		answers[fmt.Sprintf("h%d.example.com", i)] = netip.MustParseAddr(c.Addr)
		// Nothing is dialed that the policy would let through: no packet
		// leaves loopback even if the table were wrong.
		if err := egress.Check(netip.MustParseAddr(c.Addr)); err == nil {
			t.Fatalf("the policy allows %s (%s)", c.Addr, c.Name)
		}
	}
	client := tools.New(nil, tools.Options{Resolver: egresstest.Resolver(t, answers)}).Client()
	// send makes a lead's one and only attempt and returns the log.
	send := func(url string, leadID int64) (string, error) {
		var logs apptest.Buffer
		n := form.NewNotifier(form.NotifierOptions{Client: client, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: []time.Duration{}})
		err := n.Work(context.Background(), job(url, leadID, 1, 1))
		return logs.String(), err
	}
	// The client is guarded: loopback is refused before anything else is
	// tried, or the table's addresses would be dialed for real.
	if logs, err := send(srv.URL, 1); err == nil || !strings.Contains(logs, "blocked: 127.0.0.1 is a loopback address") {
		t.Fatalf("loopback: %v\n%s", err, logs)
	}
	for i, c := range cases {
		for _, u := range []string{
			"http://" + net.JoinHostPort(c.Addr, strconv.Itoa(port)) + "/leads",
			fmt.Sprintf("http://h%d.example.com:%d/leads", i, port),
		} {
			logs, err := send(u, int64(i+2))
			var cancel *rivertype.JobCancelError
			if !errors.As(err, &cancel) || !strings.Contains(logs, `reason="blocked: `) {
				t.Errorf("%s (%s) at %s: %v\n%s", c.Name, c.Addr, u, err, logs)
			}
		}
	}
	if a, _ := rc.snapshot(); len(a) != 0 {
		t.Errorf("the receiver got %d requests", len(a))
	}
}

// DefaultBackoff is a copy on each call: a change to one schedule is no
// change to every notifier's.
func TestDefaultBackoffIsACopy(t *testing.T) {
	b := form.DefaultBackoff()
	b[0] = time.Hour
	if form.DefaultBackoff()[0] == time.Hour {
		t.Error("DefaultBackoff shares its slice")
	}
}
