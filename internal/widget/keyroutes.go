package widget

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Bounds of a key's rate limits.
const (
	maxPerMinute = 100_000
	maxPerDay    = 100_000_000
)

// createdKey is the answer of POST .../key: the only one that holds the
// whole key.
type createdKey struct {
	Key string `json:"key"`
	agentline.WidgetKey
}

// createKey makes the channel's key, or rotates it: the old key stops
// working at once on this instance and within the cache TTL on others. An
// optional body sets origins and limits as PATCH does, before the key is
// shown to anyone and in the same transaction: if anything fails, the old
// key keeps working as it was.
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.authorizeChannel(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	in, err := decodeOptionalKeyInput(r)
	if err != nil {
		return err
	}
	key, prefix, err := newKey()
	if err != nil {
		return err
	}
	var change func(*agentline.WidgetKey) error
	if in != nil {
		change = in.apply
	}
	k, err := h.store.SetWidgetKey(r.Context(), projectID, channelID, hashKey(key), prefix, change)
	if err != nil {
		return err
	}
	h.forget(channelID)
	httpx.Logger(r.Context()).Info("widget key issued", "channel_id", channelID, "prefix", prefix)
	httpx.WriteJSON(w, http.StatusCreated, createdKey{Key: key, WidgetKey: k})
	return nil
}

// decodeOptionalKeyInput reads the body of POST .../key: nothing, or a
// keyInput. It validates before any key is made.
func decodeOptionalKeyInput(r *http.Request) (*keyInput, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	var in keyInput
	if err := httpx.Decode(r, &in); err != nil {
		return nil, err
	}
	if err := in.apply(&agentline.WidgetKey{RateLimitPerMinute: agentline.DefaultRateLimitPerMinute}); err != nil {
		return nil, err
	}
	return &in, nil
}

// getKey answers the channel's key record (without the key), or null
// when the channel has none.
func (h *Handler) getKey(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.authorizeChannel(r, agentline.PermView)
	if err != nil {
		return err
	}
	k, err := h.store.WidgetKey(r.Context(), projectID, channelID)
	if errors.Is(err, agentline.ErrNotFound) {
		// Every new channel is without a key: that is a state to show
		// (the console offers to make one), not an error the browser logs.
		httpx.WriteJSON(w, http.StatusOK, nil)
		return nil
	}
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, k)
	return nil
}

// keyInput is the writable part of a key; nil fields keep their value.
type keyInput struct {
	AllowedOrigins     *[]string       `json:"allowed_origins"`
	RateLimitPerMinute *int64          `json:"rate_limit_per_minute"`
	RateLimitPerDay    json.RawMessage `json:"rate_limit_per_day"` // null removes the limit
}

func (in keyInput) apply(k *agentline.WidgetKey) error {
	if in.AllowedOrigins != nil {
		origins, err := normalizeOrigins(*in.AllowedOrigins)
		if err != nil {
			return err
		}
		k.AllowedOrigins = origins
	}
	if in.RateLimitPerMinute != nil {
		if *in.RateLimitPerMinute < 1 || *in.RateLimitPerMinute > maxPerMinute {
			return agentline.Invalid("rate_limit_per_minute", "rate_limit_per_minute must be between 1 and %d", maxPerMinute)
		}
		k.RateLimitPerMinute = *in.RateLimitPerMinute
	}
	if raw := bytes.TrimSpace(in.RateLimitPerDay); len(raw) > 0 {
		if string(raw) == "null" {
			k.RateLimitPerDay = nil
		} else {
			var n int64
			if err := json.Unmarshal(raw, &n); err != nil || n < 1 || n > maxPerDay {
				return agentline.Invalid("rate_limit_per_day", "rate_limit_per_day must be null or between 1 and %d", maxPerDay)
			}
			k.RateLimitPerDay = &n
		}
	}
	return nil
}

func (h *Handler) updateKey(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.authorizeChannel(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in keyInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	k, err := h.store.WidgetKey(r.Context(), projectID, channelID)
	if err != nil {
		return err
	}
	if err := in.apply(&k); err != nil {
		return err
	}
	if k, err = h.store.UpdateWidgetKey(r.Context(), k); err != nil {
		return err
	}
	h.forget(channelID)
	httpx.WriteJSON(w, http.StatusOK, k)
	return nil
}

func (h *Handler) deleteKey(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.authorizeChannel(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	if err := h.store.DeleteWidgetKey(r.Context(), projectID, channelID); err != nil {
		return err
	}
	h.forget(channelID)
	httpx.Logger(r.Context()).Info("widget key revoked", "channel_id", channelID)
	httpx.NoContent(w)
	return nil
}
