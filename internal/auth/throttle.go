package auth

import (
	"strings"
	"sync"
	"time"
)

// Limits within throttleWindow before more are refused: of wrong
// passwords (on every route that checks one), and of password reset
// emails asked for.
const (
	throttleWindow    = 15 * time.Minute
	maxFailsPerEmail  = 5
	maxFailsPerIP     = 20
	maxResetsPerEmail = 3
	maxResetsPerIP    = 10
	maxTrackedKeys    = 100_000
)

// throttle counts events (failed password checks, reset requests) per key
// in a sliding window; a key is "email:..." or "ip:...", each with its own
// limit. It lives in memory: each instance slows down guessing on its own.
type throttle struct {
	mu       sync.Mutex
	fails    map[string][]time.Time
	perEmail int
	perIP    int
}

func newThrottle(perEmail, perIP int) *throttle {
	return &throttle{fails: map[string][]time.Time{}, perEmail: perEmail, perIP: perIP}
}

// throttleKeys are the keys of a request for email from clientIP.
func throttleKeys(email, clientIP string) []string {
	return []string{"email:" + strings.ToLower(strings.TrimSpace(email)), "ip:" + clientIP}
}

func (t *throttle) limitFor(key string) int {
	if strings.HasPrefix(key, "ip:") {
		return t.perIP
	}
	return t.perEmail
}

// blocked returns how long until any of keys may try again, or 0.
func (t *throttle) blocked(keys []string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		f := t.prune(k, now)
		if len(f) >= t.limitFor(k) {
			if w := f[len(f)-t.limitFor(k)].Add(throttleWindow).Sub(now); w > wait {
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
