package coalesce_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/coalesce"
)

// recorder is a Flush that doubles each item, records each batch's size,
// and, while gate is set, waits on it before answering.
type recorder struct {
	mu    sync.Mutex
	sizes []int
	gate  chan struct{}
	fail  error
}

func (r *recorder) flush(_ context.Context, items []int) ([]int, error) {
	r.mu.Lock()
	r.sizes = append(r.sizes, len(items))
	gate, fail := r.gate, r.fail
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if fail != nil {
		return nil, fail
	}
	out := make([]int, len(items))
	for i, v := range items {
		out[i] = 2 * v
	}
	return out, nil
}

func (r *recorder) batches() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sizes)
}

// waitFor polls until cond holds, for at most ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// held starts the leader with the first flush held at the gate, queues n
// more calls behind it, and returns their results once the gate opens.
func held(t *testing.T, g *coalesce.Group[int, int], r *recorder, n int) (results []int, errs []error) {
	t.Helper()
	r.gate = make(chan struct{})
	results, errs = make([]int, n+1), make([]error, n+1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); results[0], errs[0] = g.Do(context.Background(), 0) }()
	waitFor(t, "the first flush", func() bool { return len(r.batches()) == 1 })
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], errs[i] = g.Do(context.Background(), i) }()
	}
	waitFor(t, "the calls to queue", func() bool { return g.Queued() == n })
	r.mu.Lock()
	close(r.gate)
	r.gate = nil
	r.mu.Unlock()
	wg.Wait()
	return results, errs
}

// With nothing in flight each call flushes at once, alone.
func TestLoneCallsFlushAtOnce(t *testing.T) {
	r := &recorder{}
	g := &coalesce.Group[int, int]{Flush: r.flush}
	for i := range 5 {
		if got, err := g.Do(context.Background(), i); err != nil || got != 2*i {
			t.Fatalf("Do(%d) = %d, %v", i, got, err)
		}
	}
	if got := r.batches(); !slices.Equal(got, []int{1, 1, 1, 1, 1}) {
		t.Fatalf("batches %v, want five of one", got)
	}
}

// Calls that arrive while a flush is in flight go in the next flushes, at
// most Max each, and each gets its own result.
func TestQueuedCallsShareFlushes(t *testing.T) {
	r := &recorder{}
	g := &coalesce.Group[int, int]{Flush: r.flush, Max: 4}
	results, errs := held(t, g, r, 10)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, got := range results {
		if got != 2*i {
			t.Errorf("call %d got %d", i, got)
		}
	}
	if got := r.batches(); !slices.Equal(got, []int{1, 4, 4, 2}) {
		t.Fatalf("batches %v, want [1 4 4 2]", got)
	}
	if got, err := g.Do(context.Background(), 7); err != nil || got != 14 {
		t.Fatalf("after the queue drained: %d, %v", got, err)
	}
}

// A failed flush fails each of its calls, and the next flush runs.
func TestFailedFlushFailsItsCalls(t *testing.T) {
	boom := errors.New("boom")
	r := &recorder{fail: boom}
	g := &coalesce.Group[int, int]{Flush: r.flush}
	_, errs := held(t, g, r, 3)
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("call %d: %v, want boom", i, err)
		}
	}
	r.fail = nil
	if got, err := g.Do(context.Background(), 2); err != nil || got != 4 {
		t.Fatalf("after a failure: %d, %v", got, err)
	}
}

// A Flush that panics still answers the calls it had and passes the lead
// on; its leader panics.
func TestPanickingFlushAnswersEveryone(t *testing.T) {
	r := &recorder{}
	panicking := true
	g := &coalesce.Group[int, int]{}
	g.Flush = func(ctx context.Context, items []int) ([]int, error) {
		if panicking {
			panic("flush broke")
		}
		return r.flush(ctx, items)
	}
	func() {
		defer func() {
			if v := recover(); v != "flush broke" {
				t.Fatalf("recovered %v", v)
			}
		}()
		g.Do(context.Background(), 1)
	}()
	panicking = false
	if got, err := g.Do(context.Background(), 3); err != nil || got != 6 {
		t.Fatalf("after a panic: %d, %v", got, err)
	}
}

// A Flush that answers the wrong number of results is an error, not a
// panic or a wrong answer.
func TestWrongResultCountIsAnError(t *testing.T) {
	g := &coalesce.Group[int, int]{Flush: func(context.Context, []int) ([]int, error) { return nil, nil }}
	if _, err := g.Do(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "0 results for 1 items") {
		t.Fatalf("err %v", err)
	}
}

// Many goroutines at once: every call gets its own result, and no call is
// lost or answered twice (run with -race).
func TestConcurrentCalls(t *testing.T) {
	r := &recorder{}
	g := &coalesce.Group[int, int]{Flush: r.flush, Max: 8}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				v := w*1000 + i
				if got, err := g.Do(context.Background(), v); err != nil || got != 2*v {
					t.Errorf("Do(%d) = %d, %v", v, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range r.batches() {
		total += n
	}
	if total != 1600 || g.Queued() != 0 {
		t.Fatalf("%d items flushed, %d queued; want 1600, 0", total, g.Queued())
	}
}
