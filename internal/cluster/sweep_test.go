package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// endedLog is a webhook receiver that counts conversation.ended events by
// conversation, one per distinct webhook-id.
type endedLog struct {
	mu  sync.Mutex
	ids map[string]map[string]bool // conversation id -> webhook-ids
}

func (l *endedLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Type string
		Data struct {
			Conversation struct{ ID, Status string }
		}
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if json.Unmarshal(body, &ev) == nil && ev.Type == "conversation.ended" {
		l.mu.Lock()
		c := ev.Data.Conversation.ID
		if l.ids[c] == nil {
			l.ids[c] = map[string]bool{}
		}
		l.ids[c][r.Header.Get("webhook-id")] = true
		l.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// counts is how many conversations ended, and how many events beyond one
// a conversation got.
func (l *endedLog) counts() (ended, extra int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ids := range l.ids {
		extra += len(ids) - 1
	}
	return len(l.ids), extra
}

// sweptInLog sums the count of the sweeper's "ended idle conversations"
// lines in an instance's log, and says how many such lines there were.
func sweptInLog(t *testing.T, i *instance) (sessions, sweeps int) {
	t.Helper()
	f, err := os.Open(i.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var l struct {
			Msg   string
			Count int
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "ended idle conversations as abandoned" {
			sessions += l.Count
			sweeps++
		}
	}
	return sessions, sweeps
}

// Two instances on one PostgreSQL, with a 2 s idle timeout (a sweep every
// second): the recurring sweep is one River periodic job inserted by the
// elected leader, so over a window the job table holds about one sweep
// per interval, not one per instance, each run once; 40 idle sessions
// started through both instances are each abandoned once: one
// conversation.ended per session, and the sweepers' logs add up to 40.
func TestSweepRunsOncePerDeployment(t *testing.T) {
	t.Parallel()
	const sessions = 40
	dbURL := storetest.URL(t, store.Postgres)
	env := startFakes(t).env(dbURL, "")
	env["AGENTLINE_SESSION_IDLE_TIMEOUT"] = "2s"
	env["AGENTLINE_ALLOW_PRIVATE_WEBHOOKS"] = "true"
	a, b := start(t, "a", env), start(t, "b", env)
	fx := setup(t, a, dbURL)
	rc := &endedLog{ids: map[string]map[string]bool{}}
	hooks := httptest.NewServer(rc)
	t.Cleanup(hooks.Close)
	a.Must(t, 201, "POST", "/api/projects/"+itoa(fx.project.ID)+"/webhooks", fx.token,
		map[string]any{"url": hooks.URL, "events": []string{"conversation.ended"}}, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	jobs := openDB(t, ctx, dbURL).JobPool()
	sweepJobs := func(since time.Time) (all, runs, notCompleted int) {
		t.Helper()
		if err := jobs.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(attempt), 0), count(*) FILTER (WHERE state <> 'completed')
			FROM river_job WHERE kind = 'sweep_conversations' AND created_at >= $1 AND created_at < $1 + interval '10 seconds'`, since).
			Scan(&all, &runs, &notCompleted); err != nil {
			t.Fatal(err)
		}
		return all, runs, notCompleted
	}

	windowStart := time.Now().UTC()
	for k := range sessions {
		i := []*instance{a, b}[k%2]
		if r := i.widget(t, "POST", "/widget/v1/session", fx.key, map[string]any{"agent_id": fx.webAgent.ID}); r.Status != 201 {
			t.Fatalf("session %d through %s: %s", k, i.name, r)
		}
	}
	waitFor(t, time.Minute, "every idle session abandoned", func() bool {
		n, _ := rc.counts()
		return n == sessions
	})
	// The ten-second window is over, and a moment for a duplicate to show.
	time.Sleep(time.Until(windowStart.Add(12 * time.Second)))
	ended, extra := rc.counts()
	all, runs, notCompleted := sweepJobs(windowStart)
	sa, na := sweptInLog(t, a)
	sb, nb := sweptInLog(t, b)
	t.Logf("in 10 s: %d sweep jobs (%d runs, %d not completed); sessions abandoned: %d by a (%d sweeps), %d by b (%d sweeps); %d conversation.ended, %d extra",
		all, runs, notCompleted, sa, na, sb, nb, ended, extra)
	// One instance alone inserts 10 or 11 in 10 s (every second, and at
	// start); each instance inserting its own would make about 20.
	if all < 3 || all > 13 || runs != all || notCompleted != 0 {
		t.Errorf("%d sweep jobs in 10 s, %d runs, %d not completed: want about one a second, each run once", all, runs, notCompleted)
	}
	if ended != sessions || extra != 0 || sa+sb != sessions {
		t.Errorf("%d sessions ended (%d extra events), sweepers' logs %d+%d; want %d each once", ended, extra, sa, sb, sessions)
	}
}
