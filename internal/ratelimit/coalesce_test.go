package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentline/agentline/internal/ratelimit/redistest"
)

// pipelineGate is a go-redis hook that counts the limiter's pipelined
// round trips and holds the first one until released.
type pipelineGate struct {
	trips   atomic.Int64
	release chan struct{}
}

func (g *pipelineGate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *pipelineGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (g *pipelineGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || cmds[0].Name() != "incr" {
			return next(ctx, cmds) // a new connection's handshake
		}
		if g.trips.Add(1) == 1 {
			<-g.release
		}
		return next(ctx, cmds)
	}
}

// Requests that arrive while a count is in flight share the next round
// trip: the first of 300 is held in flight, the 299 behind it take three
// pipelines (128, 128 and 43 increments), and the counts stay exact: 37
// pass.
func TestRedisCountsShareRoundTrips(t *testing.T) {
	r, err := NewRedis(context.Background(), redistest.Start(t), RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	gate := &pipelineGate{release: make(chan struct{})}
	r.client.AddHook(gate)
	windows := []Window{{Limit: 37, Period: time.Hour}}
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.Allow(context.Background(), "shared", windows)
			if err != nil {
				t.Error(err)
				return
			}
			if res.Allowed {
				passed.Add(1)
			}
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); r.counts.Queued() < 299; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(gate.release)
			t.Fatalf("%d of 299 requests queued", r.counts.Queued())
		}
	}
	close(gate.release)
	wg.Wait()
	if got := gate.trips.Load(); got != 4 {
		t.Errorf("%d round trips for 300 requests, want 4 (1, 128, 128, 43)", got)
	}
	if got := passed.Load(); got != 37 {
		t.Errorf("%d of 300 passed, want 37", got)
	}
}
