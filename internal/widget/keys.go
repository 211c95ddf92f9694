package widget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// keyRandomLength is the number of base62 characters after svc_pk_
// (about 238 bits).
const keyRandomLength = 40

// newKey returns a fresh widget key and its stored prefix.
func newKey() (key, prefix string, err error) {
	s, err := agentline.RandomBase62(keyRandomLength)
	if err != nil {
		return "", "", err
	}
	key = agentline.WidgetKeyPrefix + s
	return key, key[:len(agentline.WidgetKeyPrefix)+4], nil
}

// wellFormedKey reports whether s can be a widget key at all, so that junk
// is refused without a lookup.
func wellFormedKey(s string) bool {
	if len(s) != len(agentline.WidgetKeyPrefix)+keyRandomLength || !strings.HasPrefix(s, agentline.WidgetKeyPrefix) {
		return false
	}
	for i := len(agentline.WidgetKeyPrefix); i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// keyCache serves key lookups by hash from memory. Entries, found or not,
// live for ttl, so a rotation or revocation on another instance is seen
// within ttl; on this instance forgetChannel makes it immediate. Concurrent
// misses for one hash share one query.
type keyCache struct {
	load    func(ctx context.Context, hash string) (agentline.WidgetKey, error)
	ttl     time.Duration
	now     func() time.Time
	group   singleflight.Group
	mu      sync.RWMutex
	entries map[string]keyEntry
	// gen counts invalidations; a lookup that raced with one is not kept.
	gen uint64
}

type keyEntry struct {
	key     agentline.WidgetKey
	found   bool
	expires time.Time
}

// maxCachedKeys bounds the cache against floods of made-up keys.
const maxCachedKeys = 100_000

func newKeyCache(load func(context.Context, string) (agentline.WidgetKey, error), ttl time.Duration) *keyCache {
	return &keyCache{load: load, ttl: ttl, now: time.Now, entries: map[string]keyEntry{}}
}

// get returns the key with this hash, or an invalid_key error.
func (c *keyCache) get(ctx context.Context, hash string) (agentline.WidgetKey, error) {
	now := c.now()
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	if !ok || now.After(e.expires) {
		v, err, _ := c.group.Do(hash, func() (any, error) {
			c.mu.RLock()
			gen := c.gen
			c.mu.RUnlock()
			k, err := c.load(context.WithoutCancel(ctx), hash)
			if err != nil && !errors.Is(err, agentline.ErrNotFound) {
				return nil, err
			}
			e := keyEntry{key: k, found: err == nil, expires: c.now().Add(c.ttl)}
			c.mu.Lock()
			if len(c.entries) >= maxCachedKeys {
				clear(c.entries)
			}
			if c.gen == gen {
				c.entries[hash] = e
			}
			c.mu.Unlock()
			return e, nil
		})
		if err != nil {
			return agentline.WidgetKey{}, err
		}
		e = v.(keyEntry)
	}
	if !e.found {
		return agentline.WidgetKey{}, errInvalidKey
	}
	return e.key, nil
}

func (c *keyCache) forgetChannel(channelID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, e := range c.entries {
		if e.key.ChannelID == channelID {
			delete(c.entries, h)
		}
	}
}

var errInvalidKey = agentline.Errorf(agentline.EInvalidKey,
	"the X-API-Key header must hold this channel's current widget key (svc_pk_...); it is missing, malformed, rotated or revoked")

// toucher records keys' last use without a write per request: at most one
// write per key per interval, off the request path. Each write runs on a
// goroutine of its own that the toucher owns: shutdown (stop) waits for them,
// so none writes to a store that has been closed.
type toucher struct {
	write    func(ctx context.Context, keyID int64, at time.Time) error
	interval time.Duration
	// writes counts the writes in flight; cancel ends them when stop gives
	// up waiting.
	writes sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	last   map[int64]time.Time
	// stopped refuses new writes; set under mu, so that no write is added
	// to writes once stop waits on it.
	stopped bool
}

func newToucher(write func(context.Context, int64, time.Time) error, interval time.Duration) *toucher {
	ctx, cancel := context.WithCancel(context.Background())
	return &toucher{write: write, interval: interval, last: map[int64]time.Time{}, ctx: ctx, cancel: cancel}
}

func (t *toucher) used(ctx context.Context, keyID int64, now time.Time) {
	t.mu.Lock()
	due := !t.stopped && now.Sub(t.last[keyID]) >= t.interval
	if due {
		t.last[keyID] = now
		t.writes.Add(1)
	}
	t.mu.Unlock()
	if !due {
		return
	}
	go func() {
		defer t.writes.Done()
		// The request's values (its logger) without its end: the answer
		// does not wait for this write. stop's cancel ends it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		defer context.AfterFunc(t.ctx, cancel)()
		if err := t.write(ctx, keyID, now.UTC().Truncate(time.Second)); err != nil {
			httpx.Logger(ctx).Warn("record widget key use", "key_id", keyID, "err", err)
		}
	}()
}

// stop refuses new writes and waits for those in flight until ctx ends,
// then cancels them and waits for them to return. It reports whether the
// writes finished before ctx ended.
func (t *toucher) stop(ctx context.Context) bool {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	done := make(chan struct{})
	go func() { t.writes.Wait(); close(done) }()
	finished := true
	select {
	case <-done:
	case <-ctx.Done():
		finished = false
	}
	t.cancel()
	<-done
	return finished
}
