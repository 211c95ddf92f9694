package form_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/form"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/ratelimit"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// direct is the form handler alone on a SQLite store, its request logger
// writing to logs: for the fuzz target and the log checks.
type direct struct {
	mux     *http.ServeMux
	channel agentline.Channel
	logs    *apptest.Buffer
}

func newDirect(t testing.TB, perMinute int64) direct {
	db := storetest.Open(t, store.SQLite)
	ctx := context.Background()
	u, err := db.CreateUser(ctx, "owner@example.com", "x")
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	fs := agentline.DefaultFormSettings()
	fs.Fields = append(fs.Fields,
		agentline.FormField{Name: "phone", Label: "Phone", Type: agentline.FieldTel},
		agentline.FormField{Name: "message", Label: "Message", Type: agentline.FieldTextarea},
		agentline.FormField{Name: "topic", Label: "Topic", Type: agentline.FieldSelect, Options: []string{"Sales", "Support"}},
		agentline.FormField{Name: "consent", Label: "Consent", Type: agentline.FieldCheckbox, Required: true})
	ch := agentline.Channel{ProjectID: p.ID, Type: agentline.ChannelForm, Name: "Contact", Settings: agentline.ChannelSettings{Form: fs}}
	if err := ch.Validate(); err != nil {
		t.Fatal(err)
	}
	if ch, err = db.CreateChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	d := direct{mux: http.NewServeMux(), channel: ch, logs: &apptest.Buffer{}}
	h := form.New(form.Options{Store: db, Auth: auth.New(db, time.Hour), Limiter: ratelimit.NewMemory(), SubmitsPerMinute: perMinute})
	for _, r := range h.Routes() {
		d.mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	return d
}

func (d direct) submit(contentType, accept, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/api/channels/form/submit/"+itoa(d.channel.ID), strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req = req.WithContext(httpx.WithLogger(req.Context(), slog.New(slog.NewTextHandler(d.logs, nil))))
	w := httptest.NewRecorder()
	d.mux.ServeHTTP(w, req)
	return w
}

// FuzzFormSubmit: whatever the body, JSON or form-encoded, the submit
// answers 2xx or 4xx and never panics.
func FuzzFormSubmit(f *testing.F) {
	seeds := []struct {
		form bool
		body string
	}{
		{false, `{"name":"Ada","email":"ada@example.com","consent":true}`},
		{false, `{"name":"Ada","email":"ada@example.com","phone":"+1 415 555 0100","message":"hi\nthere","topic":"Sales","consent":true}`},
		{false, `{"name":1,"email":null,"consent":"yes","topic":["Sales"]}`},
		{false, `{"_website":"x","name":"Ada"}`},
		{false, `{"name":"\u0000","email":"a@b","unknown":{}}`},
		{false, `[]`},
		{false, `{"name":`},
		{false, ``},
		{true, `name=Ada&email=ada%40example.com&consent=on`},
		{true, `name=Ada&name=Bo&consent=maybe&topic=Jobs`},
		{true, `%zz=1&&=&email=%ff`},
		{true, `_website=http%3A%2F%2Fspam&name=x`},
	}
	for _, s := range seeds {
		f.Add(s.form, s.body)
	}
	d := newDirect(f, 1<<40)
	f.Fuzz(func(t *testing.T, formEncoded bool, body string) {
		ct := "application/json"
		if formEncoded {
			ct = "application/x-www-form-urlencoded"
		}
		for _, accept := range []string{"", "text/html"} {
			w := d.submit(ct, accept, body)
			if w.Code < 200 || w.Code >= 500 || (w.Code >= 300 && w.Code < 400) {
				t.Fatalf("%s %q (Accept %q) = %d %s", ct, body, accept, w.Code, w.Body)
			}
		}
	})
}

// Every refused submission is logged with its reason; a stored one with
// its lead id.
func TestSubmitsAreLogged(t *testing.T) {
	d := newDirect(t, 3)
	cases := []struct {
		body, want string
		status     int
	}{
		{`{"name":"Ada"}`, `msg="form submit refused" client_ip=192.0.2.1 reason=invalid_request detail="the form has problems: consent: must be checked; email: is required"`, 400},
		{`{"name":"Ada","email":"ada@example.com","consent":true,"_website":"x"}`, `reason=invalid_request detail="this submission cannot be accepted (the hidden field _website was filled in)"`, 400},
		{`{"name":"Ada","email":"ada@example.com","consent":true}`, `msg="form lead stored" client_ip=192.0.2.1 lead_id=1`, 201},
		// The first refusal was for its answers and did not count: the
		// honeypot and the lead did, so one more lead fits in the limit.
		{`{"name":"Ada","email":"ada@example.com","consent":true}`, `msg="form lead stored" client_ip=192.0.2.1 lead_id=2`, 201},
		{`{"name":"Ada","email":"ada@example.com","consent":true}`, `reason=rate_limited`, 429},
	}
	for _, c := range cases {
		if w := d.submit("application/json", "", c.body); w.Code != c.status {
			t.Fatalf("%s = %d %s", c.body, w.Code, w.Body)
		}
		if !strings.Contains(d.logs.String(), c.want) {
			t.Errorf("log lacks %q:\n%s", c.want, d.logs.String())
		}
	}
}

// A body without a length that grows past the limit is a 413 in either
// answer form, never a 5xx.
func TestChunkedBodyTooLarge(t *testing.T) {
	d := newDirect(t, 100)
	for _, c := range []struct{ ct, accept string }{
		{"application/json", ""},
		{"application/x-www-form-urlencoded", ""},
		{"application/x-www-form-urlencoded", "text/html"},
	} {
		body := `{"message":"` + strings.Repeat("x", 70<<10) + `"}`
		if c.ct != "application/json" {
			body = "message=" + strings.Repeat("x", 70<<10)
		}
		req := httptest.NewRequest("POST", "/api/channels/form/submit/"+itoa(d.channel.ID), io.NopCloser(strings.NewReader(body)))
		req.ContentLength = -1
		req.Header.Set("Content-Type", c.ct)
		req.Header.Set("Accept", c.accept)
		w := httptest.NewRecorder()
		d.mux.ServeHTTP(w, req)
		if w.Code != 413 {
			t.Errorf("%s %s: %d %.200s", c.ct, c.accept, w.Code, w.Body)
		}
	}
}
