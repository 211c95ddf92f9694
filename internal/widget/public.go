package widget

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/ratelimit"
)

// publicFunc is a /widget/v1 handler; ch is the channel of the request's
// checked key. Console test sessions call the session handlers with their
// virtual channel instead (testsession.go).
type publicFunc func(w http.ResponseWriter, r *http.Request, ch channelRef) error

// channelRef is the channel a widget API operation runs on: the channel of
// a checked key, or, when testAgent is set, the virtual channel of a
// console test of that agent (channel TestChannelID of the key's project).
// It is an explicit parameter, not a context value, so that every
// operation sees which channel it serves; a value, so that the public path
// allocates nothing for it.
type channelRef struct {
	key agentline.WidgetKey
	// testAgent is the agent of a console test's virtual channel; 0 on a
	// real channel.
	testAgent int64
	// testVersion is the agent version a console test runs; 0 is the
	// latest, draft or not.
	testVersion int
}

// exposedHeaders are the answer headers a browser script may read.
const exposedHeaders = "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id"

// public runs the checks every /widget/v1 request passes, in order: the key
// (401 invalid_key), the Origin against the key's allowed_origins (401
// origin_not_allowed; agentline's own origin, the embed page's, is always
// allowed), then the key's rate limits (429 rate_limited). CORS
// headers go only to allowed origins; Vary: Origin always.
func (h *Handler) public(fn publicFunc) http.Handler {
	return httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		raw := r.Header.Get("X-API-Key")
		if !wellFormedKey(raw) {
			allowRead(w, origin)
			return errInvalidKey
		}
		key, err := h.keys.get(r.Context(), hashKey(raw))
		if err != nil {
			if agentline.ErrorCode(err) == agentline.EInvalidKey {
				allowRead(w, origin)
			}
			return err
		}
		if !originAllowed(key.AllowedOrigins, origin) && !sameOrigin(r, origin) {
			return agentline.Errorf(agentline.EOriginNotAllowed, "origin %q is not in this key's allowed_origins", origin)
		}
		allowRead(w, origin)
		windows := []ratelimit.Window{{Limit: key.RateLimitPerMinute, Period: time.Minute}}
		if key.RateLimitPerDay != nil {
			windows = append(windows, ratelimit.Window{Limit: *key.RateLimitPerDay, Period: 24 * time.Hour})
		}
		res, err := h.limiter.Allow(r.Context(), "widget_key:"+strconv.FormatInt(key.ID, 10), windows)
		if err != nil {
			return err
		}
		res.WriteHeaders(w.Header())
		if !res.Allowed {
			return res.Err()
		}
		h.touch.used(r.Context(), key.ID, h.now())
		ctx := httpx.WithLogger(r.Context(), httpx.Logger(r.Context()).With("channel_id", key.ChannelID, "project_id", key.ProjectID))
		return fn(w, r.WithContext(ctx), channelRef{key: key})
	})
}

// allowRead lets the page of origin read the answer. Pages of an allowed
// origin read every answer; any page reads an invalid_key answer, which
// holds nothing about the key, so that the site owner's widget can say
// what is wrong. An origin refusal stays unreadable: it would tell any page
// that the key exists.
func allowRead(w http.ResponseWriter, origin string) {
	if origin != "" && origin != "null" {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Expose-Headers", exposedHeaders)
	}
}

// preflight answers CORS preflights. A preflight carries no X-API-Key, so it
// cannot know the key's origins: it lets any real origin send the request,
// and the request itself is then refused (401, without CORS headers, so the
// page cannot read it) when the origin is not allowed.
func preflight(methods string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		if o := r.Header.Get("Origin"); o != "" && o != "null" {
			if _, ok := parseOrigin(o); ok {
				h.Set("Access-Control-Allow-Origin", o)
				h.Set("Access-Control-Allow-Methods", methods)
				h.Set("Access-Control-Allow-Headers", "X-API-Key, Content-Type")
				h.Set("Access-Control-Max-Age", "600")
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// widgetConfig is the answer of GET /widget/v1/config.
type widgetConfig struct {
	Project struct {
		ID       int64              `json:"id"`
		Name     string             `json:"name"`
		Branding agentline.Branding `json:"branding"`
	} `json:"project"`
	Channel struct {
		ID       int64                     `json:"id"`
		Type     agentline.ChannelType     `json:"type"`
		Settings agentline.ChannelSettings `json:"settings"`
		// FormGate: the widget shows settings.form first and connects
		// with the session_id the submission answers.
		FormGate bool `json:"form_gate"`
	} `json:"channel"`
	Agents []configAgent `json:"agents"`
}

type configAgent struct {
	ID       int64              `json:"id"`
	Name     string             `json:"name"`
	Provider agentline.Provider `json:"provider"`
	Voice    string             `json:"voice"`
	Language string             `json:"language"`
}

func (h *Handler) config(w http.ResponseWriter, r *http.Request, ch channelRef) error {
	view, err := h.configs.get(r.Context(), ch.key)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(view.body)))
	w.WriteHeader(http.StatusOK)
	w.Write(view.body)
	return nil
}

// buildConfig reads a channel's config answer from the database, and keeps
// the channel and agent for sessions (see channelView).
func (h *Handler) buildConfig(ctx context.Context, key agentline.WidgetKey) (*channelView, error) {
	p, err := h.store.Project(ctx, key.ProjectID)
	if err != nil {
		return nil, err
	}
	c, err := h.store.Channel(ctx, key.ProjectID, key.ChannelID)
	if err != nil {
		return nil, err
	}
	var out widgetConfig
	out.Project.ID, out.Project.Name, out.Project.Branding = p.ID, p.Name, p.Branding
	out.Channel.ID, out.Channel.Type, out.Channel.Settings = c.ID, c.Type, c.Settings.Public()
	out.Channel.FormGate = c.Type == agentline.ChannelForm && c.Settings.FormGate()
	out.Agents = []configAgent{}
	view := &channelView{channel: c}
	if c.AgentID != nil {
		a, err := h.store.PublishedAgent(ctx, key.ProjectID, *c.AgentID)
		if err == nil {
			out.Agents = append(out.Agents, configAgent{ID: a.ID, Name: a.Name, Provider: a.Provider, Voice: a.Voice, Language: a.Language})
			view.agent = &a
		} else if agentline.ErrorCode(err) != agentline.ENotFound {
			return nil, err
		}
	}
	body, err := json.Marshal(out)
	view.body = append(body, '\n')
	return view, err
}

// configCache keeps each channel's config answer, ready to write, and what
// sessions read with it, for ttl. It is keyed by channel id, which is unique
// across projects for real channels only: the virtual channel of console
// tests (TestChannelID in every project, for every agent) never goes
// through it (see Handler.viewOf).
type configCache struct {
	build   func(context.Context, agentline.WidgetKey) (*channelView, error)
	ttl     time.Duration
	now     func() time.Time
	mu      sync.RWMutex
	entries map[int64]configEntry
	gen     uint64 // counts invalidations, as in keyCache
}

type configEntry struct {
	view    *channelView
	expires time.Time
}

func newConfigCache(build func(context.Context, agentline.WidgetKey) (*channelView, error), ttl time.Duration) *configCache {
	return &configCache{build: build, ttl: ttl, now: time.Now, entries: map[int64]configEntry{}}
}

func (c *configCache) get(ctx context.Context, key agentline.WidgetKey) (*channelView, error) {
	c.mu.RLock()
	e, ok := c.entries[key.ChannelID]
	gen := c.gen
	c.mu.RUnlock()
	if ok && c.now().Before(e.expires) {
		return e.view, nil
	}
	view, err := c.build(ctx, key)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == gen {
		c.entries[key.ChannelID] = configEntry{view: view, expires: c.now().Add(c.ttl)}
	}
	c.mu.Unlock()
	return view, nil
}

func (c *configCache) forget(channelID int64) {
	c.mu.Lock()
	c.gen++
	delete(c.entries, channelID)
	c.mu.Unlock()
}
