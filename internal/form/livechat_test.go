package form_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/form"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// widgetCall sends a /widget/v1 request with the key.
func (f fixture) widgetCall(t *testing.T, method, path, key string, body any) (int, []byte) {
	t.Helper()
	req := f.s.Request(t, method, path, "", body)
	req.Header.Set("X-API-Key", key)
	r := f.s.Send(t, req)
	return r.Status, r.Body
}

// In live chat mode a submission answers the agent and a session; the
// session started with it and the key tells the agent the lead's answers,
// and the lead shows that session's transcript.
func TestLiveChat(t *testing.T) {
	f := newFixture(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	form := map[string]any{"mode": "live_chat", "notify_url": "https://hooks.example.com/secret-path", "fields": []map[string]any{
		{"name": "name", "label": "Your name", "required": true},
		{"name": "order", "label": "Order number"},
		{"name": "vip", "label": "VIP customer", "type": "checkbox"},
	}}
	c := f.formChannel(t, form, true)
	var key struct{ Key string }
	f.s.Must(t, 201, "POST", "/api/channels/"+itoa(c.ID)+"/key", f.tok, nil, &key)

	// The widget's config says it is a form gate and gives the fields, not
	// the notify_url.
	status, body := f.widgetCall(t, "GET", "/widget/v1/config", key.Key, nil)
	var cfg struct {
		Channel struct {
			FormGate bool                      `json:"form_gate"`
			Settings agentline.ChannelSettings `json:"settings"`
		} `json:"channel"`
	}
	json.Unmarshal(body, &cfg)
	if status != 200 || !cfg.Channel.FormGate || cfg.Channel.Settings.Form == nil || len(cfg.Channel.Settings.Form.Fields) != 3 ||
		strings.Contains(string(body), "hooks.example.com") {
		t.Fatalf("config %d %s", status, body)
	}
	// A form channel's conversation starts with the form.
	if status, body := f.widgetCall(t, "POST", "/widget/v1/session", key.Key, map[string]any{"agent_id": f.agent.ID}); status != 400 || !strings.Contains(string(body), `"field":"session_id"`) {
		t.Fatalf("session without the form: %d %s", status, body)
	}

	var sub struct {
		Mode      string `json:"mode"`
		LeadID    int64  `json:"lead_id"`
		AgentID   int64  `json:"agent_id"`
		SessionID string `json:"session_id"`
	}
	f.s.Must(t, 201, "POST", submitPath(c), "", map[string]any{"name": "Grace Hopper", "order": "A-1042", "vip": true}, &sub)
	if sub.Mode != "live_chat" || sub.AgentID != f.agent.ID || !strings.HasPrefix(sub.SessionID, "ses_") || sub.LeadID == 0 {
		t.Fatalf("submit: %+v", sub)
	}
	status, body = f.widgetCall(t, "POST", "/widget/v1/session", key.Key, map[string]any{"agent_id": sub.AgentID, "session_id": sub.SessionID})
	var sess struct {
		SessionID    string `json:"session_id"`
		ClientSecret string `json:"client_secret"`
	}
	json.Unmarshal(body, &sess)
	if status != 201 || sess.SessionID != sub.SessionID || sess.ClientSecret == "" {
		t.Fatalf("session: %d %s", status, body)
	}
	ins := f.s.App.Sandbox.Instructions()
	if len(ins) != 1 {
		t.Fatalf("%d client secrets minted", len(ins))
	}
	for _, want := range []string{"You help Acme's customers.", "- Your name: Grace Hopper\n", "- Order number: A-1042\n", "- VIP customer: yes"} {
		if !strings.Contains(ins[0], want) {
			t.Errorf("the provider's instructions lack %q:\n%s", want, ins[0])
		}
	}
	// Another channel's key cannot take the session.
	other := f.formChannel(t, form, true)
	var otherKey struct{ Key string }
	f.s.Must(t, 201, "POST", "/api/channels/"+itoa(other.ID)+"/key", f.tok, nil, &otherKey)
	if status, body := f.widgetCall(t, "POST", "/widget/v1/session", otherKey.Key, map[string]any{"agent_id": sub.AgentID, "session_id": sub.SessionID}); status != 404 {
		t.Errorf("another channel's key: %d %s", status, body)
	}

	// The conversation's transcript shows with the lead.
	if status, body := f.widgetCall(t, "POST", "/widget/v1/analytics", key.Key, map[string]any{"session_id": sub.SessionID, "events": []map[string]any{
		{"type": "transcript", "data": map[string]string{"role": "user", "text": "Where is order A-1042?"}}}}); status != 202 {
		t.Fatalf("analytics: %d %s", status, body)
	}
	var lead struct {
		agentline.Lead
		Session *struct {
			ID         string `json:"id"`
			Transcript []struct {
				Role, Text string
			} `json:"transcript"`
		} `json:"session"`
	}
	f.s.Must(t, 200, "GET", "/api/leads/"+itoa(sub.LeadID), f.tok, nil, &lead)
	if lead.Mode != agentline.FormLiveChat || lead.SessionID == nil || *lead.SessionID != sub.SessionID || lead.AgentID == nil ||
		lead.Session == nil || lead.Session.ID != sub.SessionID || len(lead.Session.Transcript) != 1 || lead.Session.Transcript[0].Text != "Where is order A-1042?" {
		t.Fatalf("lead: %+v %+v", lead.Lead, lead.Session)
	}

	// Snippets: the one tag (the key names the gate channel); the spec's
	// two-step form mounts without agentId; the iframe is the embed-widget
	// page.
	var snip struct {
		Script, Iframe string
		ScriptMount    string `json:"script_mount"`
	}
	f.s.Must(t, 200, "GET", "/api/channels/"+itoa(c.ID)+"/snippets", f.tok, nil, &snip)
	if !strings.Contains(snip.Script, `data-public-key="YOUR_WIDGET_KEY"`) ||
		strings.Contains(snip.ScriptMount, "agentId") || !strings.Contains(snip.ScriptMount, `channelId: "`+itoa(c.ID)+`"`) ||
		!strings.Contains(snip.Iframe, "/api/channels/form/embed-widget/"+itoa(c.ID)+"?key=YOUR_WIDGET_KEY") {
		t.Errorf("gate snippets: %+v", snip)
	}

	// The gate's iframe page takes the channel's key; the voice page does
	// not serve a form channel, nor the gate page a lead capture form.
	capture := f.formChannel(t, map[string]any{}, false)
	var captureKey struct{ Key string }
	f.s.Must(t, 201, "POST", "/api/channels/"+itoa(capture.ID)+"/key", f.tok, nil, &captureKey)
	for _, tc := range []struct {
		path string
		want int
		has  string
	}{
		{"/api/channels/form/embed-widget/" + itoa(c.ID) + "?key=" + key.Key, 200, `agentId: ""`},
		{"/api/channels/form/embed-widget/" + itoa(c.ID) + "?key=" + otherKey.Key, 401, "does not belong"},
		{"/api/channels/form/embed-widget/" + itoa(c.ID), 401, "no valid key"},
		{"/api/channels/voice/embed/" + itoa(c.ID) + "?key=" + key.Key, 404, "does not exist"},
		{"/api/channels/form/embed-widget/" + itoa(capture.ID) + "?key=" + captureKey.Key, 404, "does not exist"},
		{"/api/channels/form/embed/" + itoa(c.ID), 200, `action="/api/channels/form/submit/` + itoa(c.ID) + `"`},
	} {
		r := f.s.Do(t, "GET", tc.path, "", nil)
		if r.Status != tc.want || !strings.Contains(string(r.Body), tc.has) {
			t.Errorf("GET %s = %s, want %d with %q", tc.path, r, tc.want, tc.has)
		}
	}
}

// receiver is a notify_url endpoint on loopback that fails the first
// attempts it is told to, then accepts.
type receiver struct {
	mu       sync.Mutex
	fail     int
	attempts []http.Header
	accepted []string // bodies
	got      chan struct{}
}

func newReceiver(fail int) *receiver { return &receiver{fail: fail, got: make(chan struct{}, 100)} }

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.attempts = append(rc.attempts, r.Header.Clone())
	if len(rc.attempts) <= rc.fail {
		http.Error(w, "down for a moment", http.StatusServiceUnavailable)
		return
	}
	rc.accepted = append(rc.accepted, string(b))
	rc.got <- struct{}{}
}

func (rc *receiver) snapshot() ([]http.Header, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]http.Header(nil), rc.attempts...), append([]string(nil), rc.accepted...)
}

// The notify_url gets each lead once, even when it fails twice first; the
// submit does not wait for it.
func TestNotifyURLRetries(t *testing.T) {
	rc := newReceiver(2)
	srv := httptestServer(t, rc)
	f := newFixture(t, store.SQLite, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	c := f.formChannel(t, map[string]any{"notify_url": srv.URL + "/leads?token=abc"}, false)
	start := time.Now()
	var sub struct {
		LeadID int64 `json:"lead_id"`
	}
	f.s.Must(t, 201, "POST", submitPath(c), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, &sub)
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("the submit took %v: it waited for the receiver", d)
	}
	select {
	case <-rc.got:
	case <-time.After(20 * time.Second):
		t.Fatal("the lead was not delivered within 20 s")
	}
	// Nothing more arrives: give a fourth attempt the time to show up.
	time.Sleep(300 * time.Millisecond)
	attempts, accepted := rc.snapshot()
	if len(attempts) != 3 || len(accepted) != 1 {
		t.Fatalf("%d attempts, %d accepted; want 3 and 1", len(attempts), len(accepted))
	}
	for i, h := range attempts {
		if h.Get("Idempotency-Key") != "lead-"+itoa(sub.LeadID) || h.Get("Content-Type") != "application/json" || h.Get("X-Agentline-Attempt") != itoa(int64(i+1)) {
			t.Errorf("attempt %d headers %v", i+1, h)
		}
	}
	var p struct {
		Event   string         `json:"event"`
		Lead    agentline.Lead `json:"lead"`
		Channel struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"channel"`
	}
	if err := json.Unmarshal([]byte(accepted[0]), &p); err != nil || p.Event != "lead.created" || p.Lead.ID != sub.LeadID ||
		p.Lead.Answers["email"] != "ada@example.com" || p.Channel.ID != c.ID || p.Channel.Name != "Contact us" {
		t.Fatalf("payload %s (%v)", accepted[0], err)
	}
	checkNotifyAttempts(t, f, c, sub.LeadID)
}

// checkNotifyAttempts reads the channel's notify_url attempts as the
// console does: the two failures and the delivery, newest
// first; the URL, which may hold a token, is in none of them. Another
// project's owner does not find the channel.
func checkNotifyAttempts(t *testing.T, f fixture, c agentline.Channel, leadID int64) {
	t.Helper()
	var got struct {
		Attempts []agentline.NotifyAttempt `json:"attempts"`
	}
	path := "/api/channels/" + itoa(c.ID) + "/notify-attempts"
	for i := 0; i < 200; i++ {
		r := f.s.Must(t, 200, "GET", path, f.tok, nil, &got)
		if strings.Contains(string(r.Body), "token=abc") {
			t.Errorf("the attempts show the URL's token: %s", r.Body)
		}
		if len(got.Attempts) == 3 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(got.Attempts) != 3 {
		t.Fatalf("%d attempts recorded, want 3: %+v", len(got.Attempts), got.Attempts)
	}
	for i, a := range got.Attempts {
		want := agentline.NotifyAttempt{LeadID: leadID, ChannelID: c.ID, Attempt: 3 - i, MaxAttempts: len(form.DefaultBackoff()) + 1,
			Delivered: i == 0, StatusCode: map[bool]int{true: 200, false: 503}[i == 0]}
		if a.LeadID != want.LeadID || a.ChannelID != want.ChannelID || a.Attempt != want.Attempt || a.MaxAttempts != want.MaxAttempts ||
			a.Delivered != want.Delivered || a.StatusCode != want.StatusCode || (a.Error == "") != want.Delivered || a.At.IsZero() {
			t.Errorf("attempt %d: %+v, want %+v", i, a, want)
		}
	}
	_, other := f.s.NewUser(t, "other@example.com")
	f.s.Must(t, 404, "GET", path, other, nil, nil)
}

// A lead's notify_url delivery is a durable job: a lead submitted to an
// instance that stops before delivering it (the receiver fails meanwhile)
// is delivered, once, by a new instance on the same database.
func TestLeadDeliverySurvivesRestart(t *testing.T) {
	h := &holder{failing: true}
	srv := httptestServer(t, h)
	env := map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"}
	dbURL := storetest.URL(t, store.SQLite)
	f := fixture{s: apptest.Start(t, apptest.Config(t, dbURL, env))}
	_, f.tok = f.s.NewUser(t, "owner@example.com")
	f.s.Must(t, 201, "POST", "/api/projects", f.tok, map[string]string{"name": "Acme"}, &f.project)
	c := f.formChannel(t, map[string]any{"notify_url": srv.URL + "/leads"}, false)
	f.s.Must(t, 201, "POST", submitPath(c), "", map[string]any{"name": "Ada", "email": "ada@example.com"}, nil)
	f.s.Stop(t)
	if h.count() != 0 {
		t.Fatalf("%d deliveries before the restart", h.count())
	}
	h.mu.Lock()
	h.failing = false
	h.mu.Unlock()
	apptest.Start(t, apptest.Config(t, dbURL, env))
	for i := 0; i < 3000 && h.count() == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if h.count() != 1 {
		t.Fatalf("%d deliveries after the restart, want 1", h.count())
	}
}
