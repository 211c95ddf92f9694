package cluster_test

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/ratelimit/redistest"
	"github.com/agentline/agentline/internal/store/storetest"
)

// outage is how long PostgreSQL stays down.
const outage = 10 * time.Second

// PostgreSQL down for ten seconds under two instances: every request that
// needs it answers 503 unavailable, fast, and writes nothing; /readyz says
// so, and a browser posting a form page natively gets an HTML page. When it
// is back, the same processes serve again without a restart, and every
// project, agent, channel, key, session, call and lead written before is
// there, with no lead or session from the submits tried during the outage.
func TestPostgresDown(t *testing.T) {
	t.Parallel() // each test starts its own instances, database and fakes
	pg := storetest.NewCluster(t)
	dbURL := pg.URL(t)
	f := startFakes(t)
	env := f.env(dbURL, redistest.Start(t))
	env["AGENTLINE_FORM_SUBMITS_PER_MINUTE"] = "100000" // the probes all come from 127.0.0.1
	a, b := start(t, "a", env), start(t, "b", env)
	all := []*instance{a, b}
	fx := setup(t, a, dbURL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Written before the fault: a session (through B) and a whole call (through A).
	var sess struct {
		SessionID string `json:"session_id"`
	}
	r := b.widget(t, "POST", "/widget/v1/session", fx.key, map[string]any{"agent_id": fx.webAgent.ID})
	if r.Status != http.StatusCreated {
		t.Fatalf("session: %s", r)
	}
	r.JSON(t, &sess)
	// Two leads (through A and B): one of a lead-capture form, and one of a
	// live chat form, whose widget session is made in the same transaction.
	capture, chat := formChannel(t, a, fx, "lead_capture"), formChannel(t, b, fx, "live_chat")
	person := map[string]string{"name": "Ada Lovelace", "email": "ada@example.com"}
	var captured, chatted struct {
		LeadID    int64  `json:"lead_id"`
		SessionID string `json:"session_id"`
	}
	a.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(capture.ID), "", person, &captured)
	b.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(chat.ID), "", person, &chatted)
	before := written{sessions: []string{sess.SessionID, chatted.SessionID}, leads: []int64{captured.LeadID, chatted.LeadID},
		forms: []int64{capture.ID, chat.ID}}
	lc := dial(t, ctx, a, f, fx)
	lc.exchange(t, ctx)
	lc.Stop(ctx)
	waitFor(t, 30*time.Second, "the call's end recorded", func() bool {
		var c agentline.Call
		a.Must(t, 200, "GET", "/api/calls/"+lc.CallSID, fx.token, nil, &c)
		return c.Status == agentline.CallCompleted
	})

	pg.Stop()
	down := time.Now()
	type probe struct {
		method, path, token, key string
		body                     any
		page                     bool // a browser's native POST of the form page
	}
	probes := []probe{
		{method: "GET", path: "/readyz"},
		{method: "GET", path: "/api/projects", token: fx.token},
		{method: "POST", path: "/api/projects", token: fx.token, body: map[string]string{"name": "lost"}},
		{method: "POST", path: "/api/auth/login", body: map[string]string{"email": ownerEmail, "password": ownerPassword}},
		{method: "POST", path: "/widget/v1/session", key: fx.key, body: map[string]any{"agent_id": fx.webAgent.ID}},
		{method: "POST", path: "/api/channels/form/submit/" + itoa(capture.ID), body: person},
		{method: "POST", path: "/api/channels/form/submit/" + itoa(chat.ID), body: person},
		{method: "POST", path: "/api/channels/form/submit/" + itoa(chat.ID), body: "name=Bo&email=bo%40example.com", page: true},
	}
	var answers, slowest = 0, time.Duration(0)
	for round := 0; round < 200 && time.Since(down) < outage; round++ {
		for _, i := range all {
			for _, p := range probes {
				req := i.Request(t, p.method, p.path, p.token, p.body)
				if p.key != "" {
					req.Header.Set("X-API-Key", p.key)
				}
				if p.page {
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
					req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
				}
				start := time.Now()
				r := i.Send(t, req)
				slowest = max(slowest, time.Since(start))
				answers++
				if p.page {
					if r.Status != http.StatusServiceUnavailable || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
						!strings.Contains(string(r.Body), "nothing was saved") || r.Header.Get("Retry-After") == "" {
						t.Fatalf("native form POST on %s with the database down: %s (%s), want a 503 HTML page", i.name, r, r.Header.Get("Content-Type"))
					}
					continue
				}
				if r.Status != http.StatusServiceUnavailable || r.ErrorCode() != "unavailable" {
					t.Fatalf("%s %s on %s with the database down: %s, want 503 unavailable", p.method, p.path, i.name, r)
				}
				if p.path != "/readyz" && r.Header.Get("Retry-After") == "" {
					t.Fatalf("%s %s on %s: 503 without Retry-After", p.method, p.path, i.name)
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A database that refuses connections is known at once; the connect
	// timeout (5 s) bounds a silent one.
	if slowest > 5*time.Second {
		t.Fatalf("the slowest answer with the database down took %v", slowest)
	}
	t.Logf("%d answers in %v of outage, all 503 unavailable; slowest %v", answers, time.Since(down).Round(time.Millisecond), slowest.Round(time.Millisecond))

	pg.Start(t)
	back := time.Now()
	for _, i := range all {
		waitFor(t, 30*time.Second, i.name+" ready again", func() bool {
			return i.Do(t, "GET", "/readyz", "", nil).Status == http.StatusOK
		})
	}
	t.Logf("both instances ready %v after PostgreSQL was back", time.Since(back).Round(time.Millisecond))

	for _, i := range all {
		before.call = lc.CallSID
		checkNothingLost(t, i, fx, before)
	}
	var p agentline.Project
	b.Must(t, 201, "POST", "/api/projects", fx.token, map[string]string{"name": "after"}, &p)
}

// written is what was written before the outage besides the fixture.
type written struct {
	sessions []string // widget sessions
	leads    []int64
	forms    []int64 // form channels
	call     string
}

// formChannel makes a form channel of the fixture's project in mode, with
// the default fields (name and email, required); a live chat one talks to
// the fixture's web agent.
func formChannel(t *testing.T, i *instance, fx fixture, mode string) agentline.Channel {
	t.Helper()
	body := map[string]any{"type": "form", "name": mode, "settings": map[string]any{"form": map[string]string{"mode": mode}}}
	if mode == "live_chat" {
		body["agent_id"] = fx.webAgent.ID
	}
	var c agentline.Channel
	i.Must(t, 201, "POST", "/api/projects/"+itoa(fx.project.ID)+"/channels", fx.token, body, &c)
	return c
}

// checkNothingLost reads, through i, everything written before the outage,
// and checks that no write tried during it left anything behind.
func checkNothingLost(t *testing.T, i *instance, fx fixture, w written) {
	t.Helper()
	var projects []agentline.Project
	i.Must(t, 200, "GET", "/api/projects", fx.token, nil, &projects)
	var names []string
	for _, p := range projects {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "Shop" {
		t.Fatalf("projects on %s = %v, want only Shop: a write during the outage left something", i.name, names)
	}
	p := "/api/projects/" + itoa(fx.project.ID)
	var agents []agentline.Agent
	i.Must(t, 200, "GET", p+"/agents", fx.token, nil, &agents)
	if len(agents) != 2 {
		t.Fatalf("agents on %s = %+v", i.name, agents)
	}
	i.Must(t, 200, "GET", "/api/channels/"+itoa(fx.channel.ID), fx.token, nil, nil)
	if r := i.widget(t, "GET", "/widget/v1/config", fx.key, nil); r.Status != http.StatusOK {
		t.Fatalf("key on %s: %s", i.name, r)
	}
	var sessions struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	i.Must(t, 200, "GET", p+"/sessions", fx.token, nil, &sessions)
	var got []string
	for _, s := range sessions.Sessions {
		got = append(got, s.ID)
	}
	if !sameSet(got, w.sessions) {
		t.Fatalf("sessions on %s = %v, want only %v", i.name, got, w.sessions)
	}
	var leads struct{ Leads []agentline.Lead }
	i.Must(t, 200, "GET", p+"/leads", fx.token, nil, &leads)
	var ids []int64
	for _, l := range leads.Leads {
		ids = append(ids, l.ID)
	}
	if !sameSet(ids, w.leads) {
		t.Fatalf("leads on %s = %v, want only %v", i.name, ids, w.leads)
	}
	for _, id := range w.forms {
		if r := i.Do(t, "GET", "/api/channels/form/embed/"+itoa(id), "", nil); r.Status != http.StatusOK {
			t.Fatalf("form page %d on %s: %d", id, i.name, r.Status)
		}
	}
	var call agentline.Call
	i.Must(t, 200, "GET", "/api/calls/"+w.call, fx.token, nil, &call)
	if call.Status != agentline.CallCompleted || call.EndReason != "caller_hangup" {
		t.Fatalf("call on %s = %+v", i.name, call)
	}
}

// sameSet reports whether a and b hold the same elements, in any order.
func sameSet[T cmp.Ordered](a, b []T) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
