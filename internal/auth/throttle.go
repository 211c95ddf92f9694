package auth

import (
	"strings"
	"sync"
	"time"
)

// Limits of failed sign-ins within throttleWindow before more are refused.
const (
	throttleWindow   = 15 * time.Minute
	maxFailsPerEmail = 5
	maxFailsPerIP    = 20
	maxTrackedKeys   = 100_000
)

// throttle counts failed sign-ins per key in a sliding window. It lives in
// memory: each instance slows down guessing on its own.
type throttle struct {
	mu    sync.Mutex
	fails map[string][]time.Time
}

func newThrottle() *throttle { return &throttle{fails: map[string][]time.Time{}} }

func limitFor(key string) int {
	if strings.HasPrefix(key, "ip:") {
		return maxFailsPerIP
	}
	return maxFailsPerEmail
}

// blocked returns how long until any of keys may try again, or 0.
func (t *throttle) blocked(keys []string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		f := t.prune(k, now)
		if len(f) >= limitFor(k) {
			if w := f[len(f)-limitFor(k)].Add(throttleWindow).Sub(now); w > wait {
				wait = w
			}
		}
	}
	return wait
}

func (t *throttle) fail(keys []string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.fails) > maxTrackedKeys {
		for k := range t.fails {
			if len(t.prune(k, now)) == 0 {
				delete(t.fails, k)
			}
		}
	}
	for _, k := range keys {
		t.fails[k] = append(t.prune(k, now), now)
	}
}

func (t *throttle) reset(key string) {
	t.mu.Lock()
	delete(t.fails, key)
	t.mu.Unlock()
}

// prune drops failures older than the window; the caller holds mu.
func (t *throttle) prune(key string, now time.Time) []time.Time {
	f := t.fails[key]
	i := 0
	for i < len(f) && now.Sub(f[i]) >= throttleWindow {
		i++
	}
	if i > 0 {
		f = f[i:]
		if len(f) == 0 {
			delete(t.fails, key)
			return nil
		}
		t.fails[key] = f
	}
	return f
}
