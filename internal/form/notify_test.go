package form_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/form"
	"github.com/agentline/agentline/internal/tools"
)

func httptestServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// waitForLog waits until the log holds text.
func waitForLog(t *testing.T, logs *apptest.Buffer, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("log lacks %q:\n%s", text, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func channelTo(url string) agentline.Channel {
	f := agentline.DefaultFormSettings()
	f.NotifyURL = url
	return agentline.Channel{ID: 7, Name: "Contact", Type: agentline.ChannelForm, Settings: agentline.ChannelSettings{Form: f}}
}

// The tool facility's guard keeps notify_url off loopback unless private
// webhooks are allowed; the refusal is logged with the lead and reason.
func TestNotifyGuard(t *testing.T) {
	rc := newReceiver(0)
	srv := httptestServer(t, rc)
	var logs apptest.Buffer
	n := form.NewNotifier(form.NotifierOptions{Client: tools.New(nil, tools.Options{}).Client(),
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: []time.Duration{time.Millisecond}})
	n.Send(channelTo(srv.URL), agentline.Lead{ID: 41, ChannelID: 7})
	waitForLog(t, &logs, `msg="notify: lead not delivered" lead_id=41`)
	n.Close()
	if !strings.Contains(logs.String(), "loopback address") || !strings.Contains(logs.String(), "attempts=2") {
		t.Errorf("log:\n%s", logs.String())
	}
	if a, _ := rc.snapshot(); len(a) != 0 {
		t.Errorf("the guard let %d requests through", len(a))
	}

	allowed := form.NewNotifier(form.NotifierOptions{Client: tools.New(nil, tools.Options{AllowPrivateWebhooks: true}).Client(),
		Logger: slog.New(slog.DiscardHandler)})
	defer allowed.Close()
	allowed.Send(channelTo(srv.URL), agentline.Lead{ID: 42, ChannelID: 7})
	select {
	case <-rc.got:
	case <-time.After(10 * time.Second):
		t.Fatal("not delivered with private webhooks allowed")
	}
}

// Attempts are bounded; Close gives up a waiting retry at once and says so;
// a lead sent after Close is logged, not lost silently; a channel without
// notify_url sends nothing.
func TestNotifierGivesUpAndCloses(t *testing.T) {
	rc := newReceiver(1000)
	srv := httptestServer(t, rc)
	var logs apptest.Buffer
	client := tools.New(nil, tools.Options{AllowPrivateWebhooks: true}).Client()
	n := form.NewNotifier(form.NotifierOptions{Client: client, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Backoff: []time.Duration{time.Millisecond, time.Millisecond}})
	n.Send(channelTo(srv.URL), agentline.Lead{ID: 1})
	waitForLog(t, &logs, `msg="notify: lead not delivered" lead_id=1`)
	if a, _ := rc.snapshot(); len(a) != 3 {
		t.Errorf("%d attempts, want 3 (1 + 2 retries)", len(a))
	}
	n.Close()

	logs = apptest.Buffer{}
	slow := form.NewNotifier(form.NotifierOptions{Client: client, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: []time.Duration{time.Hour}})
	slow.Send(channelTo(srv.URL), agentline.Lead{ID: 2})
	waitForLog(t, &logs, "retrying")
	start := time.Now()
	slow.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	slow.Send(channelTo(srv.URL), agentline.Lead{ID: 3})
	slow.Send(channelTo(""), agentline.Lead{ID: 4})
	for _, want := range []string{"lead_id=2", "shutting down before retry", `lead_id=3 channel_id=7 reason="shutting down"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "lead_id=4") {
		t.Error("a channel without notify_url was notified")
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

// Wait returns once the first attempt of every queued delivery has ended
// (delivered or failed: retries are not waited for), or when its context
// ends first.
func TestNotifierWait(t *testing.T) {
	h := &holder{hold: 300 * time.Millisecond}
	srv := httptestServer(t, h)
	client := tools.New(nil, tools.Options{AllowPrivateWebhooks: true}).Client()
	n := form.NewNotifier(form.NotifierOptions{Client: client, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Backoff: []time.Duration{time.Hour}})
	defer n.Close()
	expired, cancelExpired := context.WithCancel(t.Context())
	cancelExpired()
	for range 20 { // an ended context with nothing in flight is no timeout
		if err := n.Wait(expired); err != nil {
			t.Fatalf("Wait with nothing queued: %v", err)
		}
	}
	n.Send(channelTo(srv.URL), agentline.Lead{ID: 1})
	n.Send(channelTo(srv.URL), agentline.Lead{ID: 2})
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := n.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with deliveries in flight past its deadline = %v", err)
	}
	if err := n.Wait(t.Context()); err != nil || h.count() != 2 {
		t.Fatalf("Wait = %v with %d delivered, want both", err, h.count())
	}

	h.mu.Lock()
	h.failing = true
	h.mu.Unlock()
	n.Send(channelTo(srv.URL), agentline.Lead{ID: 3}) // fails, then waits an hour to retry
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := n.Wait(ctx); err != nil {
		t.Fatalf("Wait held by a retry: %v", err)
	}
}
