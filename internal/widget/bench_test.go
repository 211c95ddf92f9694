package widget_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/provider"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// benchWorkers is the number of concurrent clients on loopback.
const benchWorkers = 8

// unlimitKey sets the channel key's limit far above what a benchmark sends
// (more than PATCH allows), so the limiter counts every request but never
// refuses one, and allows the benchmarks' origin.
func (e *env) unlimitKey(b *testing.B) {
	k, err := e.db.WidgetKey(context.Background(), e.project.ID, e.channel.ID)
	if err != nil {
		b.Fatal(err)
	}
	k.RateLimitPerMinute, k.AllowedOrigins = 1<<40, []string{"https://shop.example.com"}
	if _, err := e.db.UpdateWidgetKey(context.Background(), k); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkConfigVsHello measures GET /widget/v1/config (key check, origin
// check, rate limit, cached config) against a hello-world handler behind
// the same middleware on the same server, and reports both rates and their
// ratio (target: config at least 0.5 of hello).
func BenchmarkConfigVsHello(b *testing.B) {
	hello := httpx.Route{Method: "GET", Pattern: "/hello", Handler: httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		httpx.WriteJSON(w, http.StatusOK, map[string]string{"hello": "world"})
		return nil
	})}
	e := newEnv(b, envOptions{extra: []httpx.Route{hello}})
	e.unlimitKey(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers, MaxConnsPerHost: benchWorkers}}
	defer client.CloseIdleConnections()

	// run sends n requests from benchWorkers clients and returns how long
	// they took.
	run := func(n int, path string, header http.Header) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range benchWorkers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(n) {
					req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
					req.Header = header.Clone()
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("%s: status %d", path, resp.StatusCode)
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	configHeader := http.Header{"X-Api-Key": {e.key}, "Origin": {"https://shop.example.com"}}
	started := time.Now()
	lookups := e.counting.keyLookups.Load()
	// Both run in alternating rounds, so that load from elsewhere on the
	// machine falls on both alike.
	const rounds = 10
	var helloTime, configTime time.Duration
	b.ResetTimer()
	n := max(1, b.N/rounds)
	for range rounds {
		helloTime += run(n, "/hello", http.Header{})
		configTime += run(n, "/widget/v1/config", configHeader)
	}
	b.StopTimer()
	sent := float64(n * rounds)
	helloRate, configRate := sent/helloTime.Seconds(), sent/configTime.Seconds()
	b.ReportMetric(helloRate, "hello-req/s")
	b.ReportMetric(configRate, "config-req/s")
	b.ReportMetric(configRate/helloRate, "ratio")
	// The key is read from the database at most once per cache TTL (3 s).
	if n, most := e.counting.keyLookups.Load()-lookups, int64(time.Since(started)/(3*time.Second))+1; n > most {
		b.Fatalf("%d key lookups in the database in %v; at most %d expected", n, time.Since(started), most)
	}
}

// BenchmarkSessionOverProvider measures what POST /widget/v1/session adds
// to the provider's token round trip (target: at most 1 ms): one client
// alternates rounds of sessions through agentline (key, origin, rate
// limit, cached config, the token from the fake provider on loopback, the
// session row) with rounds of the same token request sent straight to the
// fake provider by the same provider client, and reports both medians and
// their difference, on SQLite and on PostgreSQL.
func BenchmarkSessionOverProvider(b *testing.B) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			e := newEnv(b, envOptions{db: storetest.Open(b, d)})
			e.unlimitKey(b)
			direct := provider.New(provider.Config{OpenAIBaseURL: e.fakeURL, OpenAIAPIKey: "sk-test"}, nil)
			body := []byte(`{"agent_id":` + itoa(e.agent.ID) + `}`)
			session := func() {
				req, _ := http.NewRequest("POST", e.srv.URL+"/widget/v1/session", bytes.NewReader(body))
				req.Header = http.Header{"X-Api-Key": {e.key}, "Origin": {"https://shop.example.com"}, "Content-Type": {"application/json"}}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Fatalf("session: status %d", resp.StatusCode)
				}
			}
			token := func() {
				if _, err := direct.SessionToken(context.Background(), e.agent, nil, ""); err != nil {
					b.Fatal(err)
				}
			}
			session() // warm the config cache and both connections
			token()
			const rounds = 10
			n := max(20, b.N/rounds)
			var viaAgentline, viaProvider []time.Duration
			b.ResetTimer()
			for range rounds {
				for range n {
					start := time.Now()
					session()
					viaAgentline = append(viaAgentline, time.Since(start))
				}
				for range n {
					start := time.Now()
					token()
					viaProvider = append(viaProvider, time.Since(start))
				}
			}
			b.StopTimer()
			median := func(l []time.Duration) time.Duration {
				slices.Sort(l)
				return l[len(l)/2]
			}
			s, p := median(viaAgentline), median(viaProvider)
			b.ReportMetric(float64(s.Microseconds())/1000, "session-p50-ms")
			b.ReportMetric(float64(p.Microseconds())/1000, "provider-p50-ms")
			b.ReportMetric(float64((s-p).Microseconds())/1000, "added-ms")
		})
	}
}
