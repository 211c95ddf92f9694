package cluster_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/ratelimit/redistest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// keyPropagation bounds how long another instance may keep serving a
// rotated or revoked key, or refusing a new one: the widget's key cache
// lives 3 s; the rest is slack for a busy machine.
const keyPropagation = 10 * time.Second

// threeInstances starts three instances sharing a fresh PostgreSQL
// database and a redis-server.
func threeInstances(t *testing.T) (a, b, c *instance, f fakes, databaseURL string) {
	t.Helper()
	databaseURL = storetest.URL(t, store.Postgres)
	redisURL := redistest.Start(t)
	f = startFakes(t)
	env := f.env(databaseURL, redisURL)
	return start(t, "a", env), start(t, "b", env), start(t, "c", env), f, databaseURL
}

// A key made on one instance works on the others; a rotation or a
// revocation on one stops the old key on all of them within the cache TTL;
// a session started on one is listed on the others.
func TestKeysAndSessionsAcrossInstances(t *testing.T) {
	t.Parallel() // each test starts its own instances, database and fakes
	a, b, c, _, dbURL := threeInstances(t)
	fx := setup(t, a, dbURL)
	all := []*instance{a, b, c}

	for _, i := range all {
		d := waitFor(t, keyPropagation, "new key on "+i.name, func() bool {
			return i.widget(t, "GET", "/widget/v1/config", fx.key, nil).Status == http.StatusOK
		})
		t.Logf("new key works on %s after %v", i.name, d.Round(time.Millisecond))
	}

	// A session started on B is listed on C and A.
	var sess struct {
		SessionID string `json:"session_id"`
	}
	r := b.widget(t, "POST", "/widget/v1/session", fx.key, map[string]any{"agent_id": fx.webAgent.ID})
	if r.Status != http.StatusCreated {
		t.Fatalf("session on b: %s", r)
	}
	r.JSON(t, &sess)
	for _, i := range []*instance{c, a} {
		var list struct {
			Sessions []struct {
				ID string `json:"id"`
			} `json:"sessions"`
		}
		i.Must(t, 200, "GET", "/api/projects/"+itoa(fx.project.ID)+"/sessions", fx.token, nil, &list)
		if len(list.Sessions) != 1 || list.Sessions[0].ID != sess.SessionID {
			t.Fatalf("sessions on %s = %+v, want %s", i.name, list.Sessions, sess.SessionID)
		}
	}

	// Rotate on A: the old key stops everywhere, the new one works everywhere.
	var rotated struct{ Key string }
	a.Must(t, 201, "POST", "/api/channels/"+itoa(fx.channel.ID)+"/key", fx.token, map[string]any{"rate_limit_per_minute": pollLimit}, &rotated)
	start := time.Now()
	for _, i := range all {
		waitFor(t, keyPropagation, "rotated key refused on "+i.name, func() bool {
			r := i.widget(t, "GET", "/widget/v1/config", fx.key, nil)
			return r.Status == http.StatusUnauthorized && r.ErrorCode() == "invalid_key"
		})
		if r := i.widget(t, "GET", "/widget/v1/config", rotated.Key, nil); r.Status != http.StatusOK {
			t.Fatalf("new key on %s: %s", i.name, r)
		}
	}
	t.Logf("rotated key refused on all instances after %v", time.Since(start).Round(time.Millisecond))

	// Revoke on B: the key stops everywhere.
	b.Must(t, 204, "DELETE", "/api/channels/"+itoa(fx.channel.ID)+"/key", fx.token, nil, nil)
	start = time.Now()
	for _, i := range all {
		waitFor(t, keyPropagation, "revoked key refused on "+i.name, func() bool {
			return i.widget(t, "GET", "/widget/v1/config", rotated.Key, nil).Status == http.StatusUnauthorized
		})
	}
	t.Logf("revoked key refused on all instances after %v", time.Since(start).Round(time.Millisecond))
}

// A key's per-minute limit holds exactly across three instances counting in
// one Redis: of 3×limit concurrent requests spread over them, exactly limit
// pass. The windows are whole UTC minutes; a burst that straddles two is
// tried again with a new channel's key (at most three times).
func TestRateLimitExactAcrossInstances(t *testing.T) {
	t.Parallel() // each test starts its own instances, database and fakes
	a, b, c, _, dbURL := threeInstances(t)
	fx := setup(t, a, dbURL)
	all := []*instance{a, b, c}
	const limit = 20
	for attempt := 1; ; attempt++ {
		var ch struct{ ID int64 }
		a.Must(t, 201, "POST", "/api/projects/"+itoa(fx.project.ID)+"/channels", fx.token,
			map[string]any{"type": "voice_widget", "name": "limited " + itoa(int64(attempt)), "agent_id": fx.webAgent.ID}, &ch)
		var key struct{ Key string }
		a.Must(t, 201, "POST", "/api/channels/"+itoa(ch.ID)+"/key", fx.token, map[string]any{"rate_limit_per_minute": limit}, &key)
		minute := time.Now().Unix() / 60
		counts := burst(all, key.Key, 3*limit)
		if time.Now().Unix()/60 != minute && attempt < 3 {
			t.Logf("attempt %d straddled a minute: %v", attempt, counts)
			continue
		}
		if counts[http.StatusOK] != limit || counts[http.StatusTooManyRequests] != 2*limit {
			t.Fatalf("answers by status = %v, want %d × 200 and %d × 429", counts, limit, 2*limit)
		}
		return
	}
}

// burst sends n concurrent GET /widget/v1/config with key, spread over the
// instances, and counts the answers by status (0: no answer).
func burst(all []*instance, key string, n int) map[int]int {
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for k := range n {
		i := all[k%len(all)]
		wg.Go(func() {
			status := 0
			req, err := http.NewRequest("GET", i.URL+"/widget/v1/config", nil)
			if err == nil {
				req.Header.Set("X-API-Key", key)
				var res *http.Response
				if res, err = i.Client.Do(req); err == nil {
					status = res.StatusCode
					res.Body.Close()
				}
			}
			mu.Lock()
			counts[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return counts
}
