package widget_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/agentline/agentline/internal/ratelimit"
	"github.com/agentline/agentline/internal/ratelimit/redistest"
)

// hammer sends n GET /widget/v1/config at once, spread over the servers,
// and counts answers by status. Every 429 must carry Retry-After.
func hammer(t *testing.T, servers []*env, key string, n int) map[int]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest("GET", servers[i%len(servers)].srv.URL+"/widget/v1/config", nil)
			req.Header.Set("X-API-Key", key)
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode == 429 {
				if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 || resp.Header.Get("RateLimit-Remaining") != "0" {
					t.Errorf("429 without Retry-After: %v", resp.Header)
				}
			}
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return counts
}

// The limits under test are per day, so that the burst cannot straddle a
// window boundary (a minute one would, now and then).
func TestRateLimitOneInstance(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.do("PATCH", "/api/channels/"+itoa(e.channel.ID)+"/key", e.owner, "", map[string]any{"rate_limit_per_minute": 100000, "rate_limit_per_day": 50}, 200, nil)
	got := hammer(t, []*env{e}, e.key, 200)
	if got[200] != 50 || got[429] != 150 {
		t.Fatalf("answers by status = %v, want 50 x 200 and 150 x 429", got)
	}
	// Another channel's key has its own counters.
	e.do("GET", "/widget/v1/config", "", e.secondKey, nil, 200, nil)
}

func TestRateLimitTwoInstancesSharingRedis(t *testing.T) {
	url := redistest.Start(t)
	limiter := func() ratelimit.Limiter {
		r, err := ratelimit.NewRedis(context.Background(), url, ratelimit.RedisOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	a := newEnv(t, envOptions{limiter: limiter()})
	b := newServer(t, envOptions{db: a.db, limiter: limiter()})
	a.do("PATCH", "/api/channels/"+itoa(a.channel.ID)+"/key", a.owner, "", map[string]any{"rate_limit_per_minute": 100000, "rate_limit_per_day": 73}, 200, nil)
	got := hammer(t, []*env{a, b}, a.key, 200)
	if got[200] != 73 || got[429] != 127 {
		t.Fatalf("answers by status = %v, want 73 x 200 and 127 x 429", got)
	}
}
