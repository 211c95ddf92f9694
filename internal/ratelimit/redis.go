package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/coalesce"
)

// Redis keeps counters in Redis, shared by every instance using it. When
// Redis does not answer, it counts in this process instead, with the same
// limits (so per instance), until a probe finds Redis answering again: a
// Redis outage slows nothing and refuses nothing that the limits allow.
type Redis struct {
	client *redis.Client
	now    func() time.Time
	logger *slog.Logger
	probe  time.Duration
	gauge  prometheus.Gauge
	// stop ends the probe on Close; probing tracks it.
	stop    context.CancelFunc
	stopCtx context.Context
	probing sync.WaitGroup

	// counts coalesces single-window increments (allowOne).
	counts coalesce.Group[increment, int64]

	mu sync.Mutex
	// local counts while Redis is unreachable; nil while Redis answers.
	local  *Memory
	closed bool
}

// RedisOptions configure a Redis limiter. The zero value is usable.
type RedisOptions struct {
	// Logger gets one line when the limiter falls back to counting in
	// memory and one when Redis is back; nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the agentline_ratelimit_fallback gauge; nil
	// registers nowhere.
	Registerer prometheus.Registerer
	// ProbeInterval is how often an unreachable Redis is tried again;
	// default DefaultProbeInterval.
	ProbeInterval time.Duration
}

// DefaultProbeInterval is how often an unreachable Redis is tried again.
const DefaultProbeInterval = 2 * time.Second

// NewRedis returns a limiter over the Redis at rawURL (redis://, rediss://
// or unix://). Only a URL that does not parse is an error: when Redis does
// not answer yet, the limiter starts counting in memory and moves to Redis
// once it answers, so an instance can start during a Redis outage.
func NewRedis(ctx context.Context, rawURL string, o RedisOptions) (*Redis, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("AGENTLINE_REDIS_URL: %w", err)
	}
	// A limiter must answer fast or not at all: a request gives up on Redis
	// within about a second (a refused connection at once) and is counted
	// in memory instead.
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = 500*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond
	opt.MaxRetries, opt.DialerRetries = 1, 1
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = DefaultProbeInterval
	}
	r := &Redis{client: redis.NewClient(opt), now: time.Now, logger: o.Logger, probe: o.ProbeInterval,
		gauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentline_ratelimit_fallback",
			Help: "1 while Redis does not answer and widget rate limits are counted per instance, in memory; 0 while they are shared in Redis.",
		})}
	r.counts.Flush, r.counts.Max = r.incrAll, maxIncrements
	r.stopCtx, r.stop = context.WithCancel(context.Background())
	if o.Registerer != nil {
		o.Registerer.MustRegister(r.gauge)
	}
	if err := r.client.Ping(ctx).Err(); err != nil {
		r.fallBack(err)
	}
	return r, nil
}

// Close stops the probe and closes the connections to Redis.
func (r *Redis) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.probing.Wait()
	return r.client.Close()
}

// fallBack returns the in-memory limiter to count in while Redis is
// unreachable. The first call after Redis was answering logs the fallback
// and starts the probe that will end it.
func (r *Redis) fallBack(cause error) *Memory {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.local == nil {
		r.local = NewMemory()
		r.local.now = r.now
		r.gauge.Set(1)
		r.logger.Warn("redis does not answer: widget rate limits are counted per instance until it does",
			"err", cause, "probe_interval", r.probe)
		if !r.closed {
			r.probing.Add(1)
			go r.probeUntilBack()
		}
	}
	return r.local
}

// fallback returns the in-memory limiter while Redis is unreachable, else nil.
func (r *Redis) fallback() *Memory {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.local
}

// probeUntilBack tries counting in Redis every probe interval until it
// works, then goes back to counting there. Requests never wait for a probe.
func (r *Redis) probeUntilBack() {
	defer r.probing.Done()
	t := time.NewTicker(r.probe)
	defer t.Stop()
	for {
		select {
		case <-r.stopCtx.Done():
			return
		case <-t.C:
		}
		if _, err := r.allowShared(r.stopCtx, "probe", probeWindows); err != nil {
			continue
		}
		r.mu.Lock()
		r.local = nil // its counters go; Redis's were kept or started over
		r.gauge.Set(0)
		r.mu.Unlock()
		r.logger.Info("redis answers again: widget rate limits are shared across instances again")
		return
	}
}

// allowScript checks every counter, and only when all have room increments
// them all, atomically (for two windows or more: a request refused by the
// minute must not count against the day). KEYS are the counters; ARGV holds limit and expiry
// (ms) per counter. It returns {1, count...} or {0, index of the full one}.
var allowScript = redis.NewScript(`
for i = 1, #KEYS do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  if c >= tonumber(ARGV[2*i-1]) then return {0, i} end
end
local out = {1}
for i = 1, #KEYS do
  local c = redis.call('INCR', KEYS[i])
  if c == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[2*i]) end
  out[i+1] = c
end
return out
`)

// Allow counts the request in every window, or in none when one is full.
// While Redis is unreachable it counts in memory instead.
func (r *Redis) Allow(ctx context.Context, key string, windows []Window) (Result, error) {
	if m := r.fallback(); m != nil {
		return m.Allow(ctx, key, windows)
	}
	res, err := r.allowShared(ctx, key, windows)
	if err != nil {
		if ctx.Err() != nil { // the caller gave up; Redis may be fine
			return Result{}, &agentline.Error{Code: agentline.EUnavailable, Message: "rate limiting is unavailable; try again shortly", Err: err}
		}
		return r.fallBack(err).Allow(ctx, key, windows)
	}
	return res, nil
}

// allowShared counts in Redis: any error means Redis did not answer, or
// answered with an error.
func (r *Redis) allowShared(ctx context.Context, key string, windows []Window) (Result, error) {
	now := r.now()
	if len(windows) == 1 {
		return r.allowOne(ctx, key, windows[0], now)
	}
	keys := make([]string, len(windows))
	args := make([]any, 0, 2*len(windows))
	for i, w := range windows {
		idx, reset := w.at(now)
		keys[i] = counterKey(key, w, idx)
		args = append(args, w.Limit, reset.Milliseconds()+1000)
	}
	res, err := allowScript.Run(ctx, r.client, keys, args...).Int64Slice()
	if err != nil {
		return Result{}, err
	}
	if res[0] == 0 {
		return refuse(windows[res[1]-1], now), nil
	}
	return decide(windows, res[1:], now), nil
}

// counterKey names the Redis counter of key in window w's index-th period.
// The hash tag keeps one key's counters in one cluster slot.
func counterKey(key string, w Window, index int64) string {
	return fmt.Sprintf("agentline:rl:{%s}:%d:%d", strings.ReplaceAll(key, "}", ""), w.Period.Milliseconds(), index)
}

// allowOne counts a request against a single window (the widget's usual
// per-minute limit) with INCR and PEXPIRE, no script: with one window,
// counting a refused request changes no decision (the counter is past the
// limit either way, and Remaining stays 0), so the script's
// check-then-increment is not needed; running no Lua saves redis-server
// about a third of its CPU per request. The expiry is set on every call,
// to the same end of the window plus a second. Requests that arrive while
// one round trip is in flight share the next (r.counts, incrAll).
func (r *Redis) allowOne(ctx context.Context, key string, w Window, now time.Time) (Result, error) {
	idx, reset := w.at(now)
	n, err := r.counts.Do(ctx, increment{key: counterKey(key, w, idx), ttl: reset + time.Second})
	if err != nil {
		return Result{}, err
	}
	if n > w.Limit {
		return refuse(w, now), nil
	}
	return decide([]Window{w}, []int64{n}, now), nil
}

// increment is one request's INCR of a counter and the expiry it sets.
type increment struct {
	key string
	ttl time.Duration
}

// maxIncrements bounds one pipelined round trip.
const maxIncrements = 128

// incrAll sends every increment's INCR and PEXPIRE in one pipelined round
// trip and returns the counts. Redis runs a pipeline's commands one after
// another, so each count is exact, as if sent alone; redis-server's CPU
// goes mostly to reading and answering round trips, not to INCR. The
// round trip is not cut short when the request leading it gives up: the
// others in it still want their answer (the client's 500 ms timeouts
// bound it).
func (r *Redis) incrAll(ctx context.Context, incs []increment) ([]int64, error) {
	ctx = context.WithoutCancel(ctx)
	pipe := r.client.Pipeline()
	cmds := make([]*redis.IntCmd, len(incs))
	for i, inc := range incs {
		cmds[i] = pipe.Incr(ctx, inc.key)
		pipe.PExpire(ctx, inc.key, inc.ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	counts := make([]int64, len(incs))
	for i, c := range cmds {
		counts[i] = c.Val()
	}
	return counts, nil
}

// probeWindows are counted by each probe: a real increment, so that a
// Redis which answers PING but refuses writes (out of memory, read-only
// replica) is not taken for back.
var probeWindows = []Window{{Limit: math.MaxInt32, Period: time.Minute}}

// RedisClientLogs sends the Redis client library's own messages (a line on
// stderr for every failed dial, by default) to logger at debug level: while
// Redis is down, the limiter's one warning says what matters. The library
// has one logger per process, so main calls this once.
func RedisClientLogs(logger *slog.Logger) { redis.SetLogger(redisLogger{logger}) }

type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(ctx context.Context, format string, v ...any) {
	r.l.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}
