package app_test

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// testParallel is how many of the package's parallel tests run at once
// unless -test.parallel says otherwise. Its tests mostly wait (on a
// browser, on calls played in real time, on timers), so go test's default,
// one per CPU, left a two-core machine half idle for most of the run.
const testParallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(testParallel, runtime.GOMAXPROCS(0))))
	}
	storetest.Main(m, sharedBrowser.stop)
}

// forEachDatabase runs fn once on a fresh SQLite file and once on a fresh
// PostgreSQL database.
func forEachDatabase(t *testing.T, fn func(t *testing.T, databaseURL string)) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) { fn(t, storetest.URL(t, d)) })
	}
}

// forEachDatabaseInParallel is forEachDatabase with the two databases'
// runs side by side: for a long test whose runs share nothing (the
// package's longest, run one after the other, was the last to finish).
func forEachDatabaseInParallel(t *testing.T, fn func(t *testing.T, databaseURL string)) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, storetest.URL(t, d))
		})
	}
}

// The first start prints a generated owner account once; it signs in, makes
// a project and an agent; after a graceful stop and a new start on the same
// database the data is there and nothing new is printed.
func TestFirstStartThenRestartKeepsData(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		cfg := apptest.Config(t, databaseURL, nil)
		s := apptest.Start(t, cfg)
		out := s.Stdout.String()
		email, password, ok := apptest.FirstCredentials(out)
		if !ok || email != "admin@localhost" || len(password) < 16 {
			t.Fatalf("first start printed %q", out)
		}
		if strings.Count(out, "password:") != 1 || !strings.Contains(out, "sign in:  "+s.URL+"/\n") {
			t.Fatalf("credentials should be printed once with the console URL: %q", out)
		}
		token := s.Login(t, email, password)

		var me struct {
			User     agentline.User `json:"user"`
			Features map[string]bool
		}
		s.Must(t, http.StatusOK, "GET", "/api/me", token, nil, &me)
		if me.User.Email != "admin@localhost" {
			t.Fatalf("me = %+v", me)
		}
		var p agentline.Project
		s.Must(t, http.StatusCreated, "POST", "/api/projects", token, map[string]any{"name": "Shop", "branding": map[string]string{"display_name": "Shop Inc"}}, &p)
		if p.Role != agentline.RoleOwner {
			t.Fatalf("creator's role = %q, want owner", p.Role)
		}
		var a agentline.Agent
		s.Must(t, http.StatusCreated, "POST", "/api/projects/"+itoa(p.ID)+"/agents", token,
			map[string]string{"name": "Ada", "instructions": "Be brief.", "greeting": "Hello!", "model": "gemini-2.5-flash-native-audio-preview-09-2025", "language": "de-DE"}, &a)
		if a.Provider != agentline.ProviderGemini || a.Voice != "Puck" || a.ProjectID != p.ID {
			t.Fatalf("agent = %+v", a)
		}
		if strings.HasPrefix(databaseURL, "sqlite:") {
			if _, err := os.Stat(strings.TrimPrefix(databaseURL, "sqlite:") + "-wal"); err != nil {
				t.Errorf("SQLite should run in WAL mode: %v", err)
			}
		}
		secret := s.App.Secret
		if len(secret) < 32 {
			t.Fatalf("generated secret %q is too short", secret)
		}
		s.Stop(t) // fails the test unless Run returned nil

		s2 := apptest.Start(t, cfg)
		if out := s2.Stdout.String(); out != "" {
			t.Fatalf("second start printed %q", out)
		}
		if s2.App.Secret != secret {
			t.Fatal("the generated secret changed across a restart")
		}
		// The old session survives the restart; a new sign-in works too.
		var projects []agentline.Project
		s2.Must(t, http.StatusOK, "GET", "/api/projects", token, nil, &projects)
		if len(projects) != 1 || projects[0].Name != "Shop" || projects[0].Branding.DisplayName != "Shop Inc" {
			t.Fatalf("projects after restart = %+v", projects)
		}
		token2 := s2.Login(t, email, password)
		var got agentline.Agent
		s2.Must(t, http.StatusOK, "GET", "/api/agents/"+itoa(a.ID), token2, nil, &got)
		if !reflect.DeepEqual(got, a) {
			t.Fatalf("agent after restart = %+v, want %+v", got, a)
		}
	})
}

// AGENTLINE_ADMIN_EMAIL and AGENTLINE_ADMIN_PASSWORD make that account on
// first start, and nothing is printed.
func TestAdminAccountFromSettings(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := apptest.Start(t, apptest.Config(t, databaseURL, map[string]string{
			"AGENTLINE_ADMIN_EMAIL":    "Boss@Example.com",
			"AGENTLINE_ADMIN_PASSWORD": "a long enough secret",
			"AGENTLINE_SECRET":         "from-the-environment",
		}))
		if s.App.Secret != "from-the-environment" {
			t.Fatalf("secret = %q, want AGENTLINE_SECRET", s.App.Secret)
		}
		if out := s.Stdout.String(); out != "" {
			t.Fatalf("printed %q although the password was given", out)
		}
		s.Login(t, "boss@example.com", "a long enough secret")
		if r := s.Do(t, "POST", "/api/auth/login", "", map[string]string{"email": "admin@localhost", "password": "x"}); r.Status != http.StatusUnauthorized {
			t.Fatalf("admin@localhost exists: %s", r)
		}
	})
}

// Only the email given: the password is generated and printed for it.
func TestAdminEmailWithoutPassword(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, apptest.Config(t, storetest.URL(t, store.SQLite), map[string]string{"AGENTLINE_ADMIN_EMAIL": "ops@example.com"}))
	email, password, ok := apptest.FirstCredentials(s.Stdout.String())
	if !ok || email != "ops@example.com" {
		t.Fatalf("printed %q", s.Stdout.String())
	}
	s.Login(t, email, password)
}

// A first-start password too short to be accepted stops start-up.
func TestAdminPasswordTooShortFailsStart(t *testing.T) {
	cfg := apptest.Config(t, storetest.URL(t, store.SQLite), map[string]string{"AGENTLINE_ADMIN_PASSWORD": "short"})
	_, err := newApp(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("New = %v, want an error about the password", err)
	}
}

// A request in flight when shutdown starts still completes: the server
// stops accepting connections, waits for the handler, then Run returns nil.
func TestShutdownLetsRequestsInFlightFinish(t *testing.T) {
	t.Parallel()
	s := apptest.Start(t, apptest.Config(t, storetest.URL(t, store.SQLite), nil))
	_, token := s.NewUser(t, "ann@example.com")

	// With Expect: 100-continue the client sends the body only once the
	// handler reads it, so the first write below returns only when the
	// request is being handled.
	body, w := io.Pipe()
	req := s.Request(t, "POST", "/api/projects", token, nil)
	req.Body = body
	req.Header.Set("Expect", "100-continue")
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	answer := make(chan *http.Response, 1)
	go func() {
		res, err := client.Do(req)
		if err != nil {
			t.Errorf("request in flight: %v", err)
		}
		answer <- res
	}()
	if _, err := w.Write([]byte(`{"name": `)); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { s.Stop(t); close(stopped) }()
	// Wait until the listener is closed, i.e. shutdown has begun.
	addr := strings.TrimPrefix(s.URL, "http://")
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-stopped:
		t.Fatal("Run returned while a request was in flight")
	default:
	}
	w.Write([]byte(`"Late"}`))
	w.Close()
	res := <-answer
	if res == nil {
		t.FailNow()
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("request in flight = %d, want 201", res.StatusCode)
	}
	<-stopped
}

// Instances starting together on one empty PostgreSQL database: all start,
// one account is made and printed once, and they share one secret.
func TestInstancesStartingTogether(t *testing.T) {
	t.Parallel()
	cfg := apptest.Config(t, storetest.EmptyURL(t, store.Postgres), nil)
	apps := make([]*app.App, 3)
	errs := make([]error, 3)
	outs := make([]apptest.Buffer, 3)
	var wg sync.WaitGroup
	for i := range apps {
		wg.Go(func() {
			apps[i], errs[i] = app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &outs[i])
		})
	}
	wg.Wait()
	printed := 0
	for i, a := range apps {
		if errs[i] != nil {
			t.Fatalf("instance %d: %v", i, errs[i])
		}
		defer a.Close()
		if _, _, ok := apptest.FirstCredentials(outs[i].String()); ok {
			printed++
		}
		if a.Secret != apps[0].Secret {
			t.Error("instances disagree on the secret")
		}
	}
	if printed != 1 {
		t.Fatalf("credentials printed by %d instances, want 1", printed)
	}
}
