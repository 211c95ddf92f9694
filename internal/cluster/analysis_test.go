package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/analysisfake"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// analyzedReceiver counts the conversation.analyzed deliveries per
// conversation, each verified with the official Standard Webhooks library.
type analyzedReceiver struct {
	t   *testing.T
	wh  *standardwebhooks.Webhook
	mu  sync.Mutex
	per map[string]int // conversation id -> deliveries (distinct webhook-ids)
	ids map[string]bool
}

func (rc *analyzedReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := rc.wh.Verify(body, r.Header); err != nil {
		rc.t.Errorf("a delivery does not verify: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var env struct {
		Data agentline.AnalysisEventData `json:"data"`
	}
	json.Unmarshal(body, &env)
	rc.mu.Lock()
	if id := r.Header.Get("webhook-id"); !rc.ids[id] {
		rc.ids[id] = true
		rc.per[env.Data.ConversationID]++
	}
	rc.mu.Unlock()
}

func (rc *analyzedReceiver) counts() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.per))
	for k, v := range rc.per {
		out[k] = v
	}
	return out
}

var orderLine = regexp.MustCompile(`Order K-(\d+)`)

// Two instances on PostgreSQL analyse conversations through a provider
// that holds every request; instance a is killed (-9) while its analysis
// jobs wait for answers. b starts only once a holds the first half of the
// jobs, so a has jobs in flight at the kill whichever instance polls
// first. The provider then answers; River rescues a's jobs
// (AGENTLINE_JOB_RESCUE_AFTER, 30 s: also the jobs' timeout, longer than
// the hold) and they run again. Every conversation ends with exactly one
// done analysis and one conversation.analyzed event. Provider requests made twice for one
// conversation can only be those a had in flight at the kill: they are
// counted and reported.
func TestAnalysisSurvivesKill(t *testing.T) {
	t.Parallel()
	const conversations = 16
	dbURL := storetest.URL(t, store.Postgres)
	fake := analysisfake.New("sk-test", "gemini-test")
	mux := http.NewServeMux()
	mux.Handle("/v1beta/", fake)
	mux.Handle("/v1/responses", fake)
	mux.Handle("/", providerfake.New("sk-test", "gemini-test"))
	providers := httptest.NewServer(mux)
	t.Cleanup(providers.Close)
	env := map[string]string{"AGENTLINE_DATABASE_URL": dbURL, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": providers.URL,
		"GEMINI_API_KEY": "gemini-test", "GEMINI_BASE_URL": providers.URL, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
		"AGENTLINE_WEBHOOK_RETRY_SPAN": "10m", "AGENTLINE_JOB_RESCUE_AFTER": "30s",
		"AGENTLINE_ANALYSIS_MAX_ATTEMPTS": "8", "AGENTLINE_ANALYSIS_RETRY_BACKOFF": "200ms"}
	a := start(t, "a", env)
	var b *instance
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	rc := &analyzedReceiver{t: t, per: map[string]int{}, ids: map[string]bool{}}
	receiver := httptest.NewServer(rc)
	t.Cleanup(receiver.Close)
	tok := a.Login(t, ownerEmail, ownerPassword)
	var p, ag, ch struct{ ID int64 }
	a.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	a.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]any{"name": "Web", "model": geminiModel,
		"analysis": map[string]any{"summary": true, "success_criteria": "The user got an answer.",
			"data_schema": map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}}}}, &ag)
	a.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/channels", tok, map[string]any{"type": "voice_widget", "name": "site", "agent_id": ag.ID}, &ch)
	var key struct{ Key string }
	a.Must(t, 201, "POST", "/api/channels/"+itoa(ch.ID)+"/key", tok, map[string]any{"rate_limit_per_minute": pollLimit}, &key)
	var hook struct{ Secret string }
	a.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", tok, map[string]any{"url": receiver.URL + "/hook",
		"events": []string{agentline.EventConversationAnalyzed}}, &hook)
	wh, err := standardwebhooks.NewWebhook(hook.Secret)
	if err != nil {
		t.Fatal(err)
	}
	rc.wh = wh

	fake.Hold()
	ids := map[string]int{} // conversation id -> its order number
	for n := range conversations {
		i := a
		if n >= conversations/2 {
			if b == nil {
				// a has fetched the first half, each job's request held.
				if err := fake.Wait(ctx, n); err != nil {
					t.Fatal(err)
				}
				b = start(t, "b", env)
			}
			i = b
		}
		var sess struct {
			SessionID string `json:"session_id"`
		}
		r := i.widget(t, "POST", "/widget/v1/session", key.Key, map[string]any{"agent_id": ag.ID})
		if r.Status != 201 {
			t.Fatalf("session: %s", r)
		}
		r.JSON(t, &sess)
		now := time.Now().UTC()
		r = i.widget(t, "POST", "/widget/v1/analytics", key.Key, map[string]any{"session_id": sess.SessionID, "events": []any{
			map[string]any{"type": "transcript", "at": now, "data": map[string]string{"role": "user", "text": fmt.Sprintf("Order K-%d, where is it?", n)}},
			map[string]any{"type": "session_ended", "at": now.Add(time.Second)}}})
		if r.Status >= 300 {
			t.Fatalf("events: %s", r)
		}
		ids[sess.SessionID] = n
	}
	// Every job is running, its request held by the provider.
	if err := fake.Wait(ctx, conversations); err != nil {
		t.Fatal(err)
	}
	pool := openDB(t, ctx, dbURL).JobPool()
	count := func(q string) (n int) {
		if err := pool.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	a.signal(t, syscall.SIGKILL)
	a.wait(t, 10*time.Second)
	running := func() int {
		return count(`SELECT COUNT(*) FROM river_job WHERE kind = 'analyze_conversation' AND state = 'running'`)
	}
	atKill := running()
	fake.Release()
	// b's jobs finish in moments once answered; what still runs then is
	// a's, left behind by the kill until River rescues it.
	time.Sleep(3 * time.Second)
	stuck := running()
	a.run(t)
	took := waitFor(t, 3*time.Minute, "every analysis done", func() bool {
		return count(`SELECT COUNT(*) FROM conversation_analyses WHERE status = 'done'`) == conversations
	})
	waitFor(t, time.Minute, "every conversation.analyzed delivered", func() bool { return len(rc.counts()) == conversations })
	time.Sleep(2 * time.Second) // a duplicate event, if any, would arrive meanwhile

	if n := count(`SELECT COUNT(*) FROM conversation_analyses`); n != conversations {
		t.Fatalf("%d analyses, want %d", n, conversations)
	}
	events := rc.counts()
	for id := range ids {
		if events[id] != 1 {
			t.Errorf("conversation %s: %d conversation.analyzed events, want 1", id, events[id])
		}
	}
	requests, answered := map[string]int{}, map[string]int{}
	for _, r := range fake.Requests() {
		m := orderLine.FindStringSubmatch(string(r.Body))
		if m == nil {
			t.Fatalf("a provider request without an order line: %s", r.Body)
		}
		requests[m[1]]++
		if r.Answered {
			answered[m[1]]++
		}
	}
	dupRequests, dupAnswered := 0, 0
	for k := range requests {
		dupRequests += requests[k] - 1
		dupAnswered += max(answered[k]-1, 0)
	}
	t.Logf("%d conversations; a killed with %d analysis jobs running (all %d requests held), %d of them a's (stuck 3 s after the release); every analysis done %v after; "+
		"provider requests: %d (%d repeats of a conversation), answered: %d (%d repeats); conversation.analyzed: one per conversation",
		conversations, atKill, conversations, stuck, took.Round(time.Millisecond), len(fake.Requests()), dupRequests, countAll(answered), dupAnswered)
	if dupRequests > stuck {
		t.Errorf("%d repeated provider requests, more than the %d jobs a was running at the kill", dupRequests, stuck)
	}
	if stuck == 0 {
		t.Errorf("a had no analysis job running at the kill: the test proved nothing")
	}
}

func countAll(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}
