package form_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/form"
	"github.com/agentline/agentline/internal/tools"
)

func httptestServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// syncBuffer is a log destination safe for the notifier's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("log lacks %q:\n%s", text, s.String())
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
	var logs syncBuffer
	n := form.NewNotifier(form.NotifierOptions{Client: tools.New(nil, tools.Options{}).Client(),
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: []time.Duration{time.Millisecond}})
	n.Send(channelTo(srv.URL), agentline.Lead{ID: 41, ChannelID: 7})
	logs.waitFor(t, `msg="notify: lead not delivered" lead_id=41`)
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
	var logs syncBuffer
	client := tools.New(nil, tools.Options{AllowPrivateWebhooks: true}).Client()
	n := form.NewNotifier(form.NotifierOptions{Client: client, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Backoff: []time.Duration{time.Millisecond, time.Millisecond}})
	n.Send(channelTo(srv.URL), agentline.Lead{ID: 1})
	logs.waitFor(t, `msg="notify: lead not delivered" lead_id=1`)
	if a, _ := rc.snapshot(); len(a) != 3 {
		t.Errorf("%d attempts, want 3 (1 + 2 retries)", len(a))
	}
	n.Close()

	logs = syncBuffer{}
	slow := form.NewNotifier(form.NotifierOptions{Client: client, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: []time.Duration{time.Hour}})
	slow.Send(channelTo(srv.URL), agentline.Lead{ID: 2})
	logs.waitFor(t, "retrying")
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
