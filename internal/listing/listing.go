// Package listing reads the query string of the management API's paged
// lists (sessions, leads) and cuts their pages. It is shared by the widget
// and form channels, which list the same kind of rows with the same
// filters, so that neither has to import the other.
package listing

import (
	"net/url"
	"strconv"
	"time"

	"github.com/agentline/agentline"
)

// Page sizes of a listing: limit defaults to DefaultPageSize and may be at
// most MaxPageSize.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

// Filter parses the query of a paged listing (sessions, leads):
// channel_id, agent_id, from, to (RFC 3339 or a date), limit, cursor and
// the deprecated offset (one of the two).
func Filter(q url.Values) (agentline.SessionFilter, error) {
	f := agentline.SessionFilter{Limit: DefaultPageSize}
	var err error
	if f.ChannelID, err = ID(q.Get("channel_id"), "channel_id"); err != nil {
		return f, err
	}
	if f.AgentID, err = ID(q.Get("agent_id"), "agent_id"); err != nil {
		return f, err
	}
	if f.From, err = Time(q.Get("from"), "from"); err != nil {
		return f, err
	}
	if f.To, err = Time(q.Get("to"), "to"); err != nil {
		return f, err
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageSize {
			return f, agentline.Invalid("limit", "limit must be between 1 and %d", MaxPageSize)
		}
		f.Limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1_000_000 {
			return f, agentline.Invalid("offset", "offset must be a whole number from 0")
		}
		f.Offset = n
	}
	c, err := TimeCursor(q)
	if err != nil {
		return f, err
	}
	if c != nil {
		if q.Get("offset") != "" {
			return f, agentline.Invalid("cursor", "pass cursor or the deprecated offset, not both")
		}
		f.After = &agentline.ConversationCursor{StartedAt: c.Time, ID: c.ID}
	}
	return f, nil
}

// Page cuts a list read with f.Limit one more than asked (as callers of
// Filter do, to learn whether there is a next page without counting) to
// the page, and returns the next page's offset, or nil when this page is
// the last (or was read by cursor, when offsets mean nothing).
func Page[T any](list []T, f agentline.SessionFilter) ([]T, *int) {
	limit := f.Limit - 1
	if len(list) <= limit {
		return list, nil
	}
	if f.After != nil {
		return list[:limit], nil
	}
	n := f.Offset + limit
	return list[:limit], &n
}

// PageCursor is Page's next_cursor: the cursor after the page's last row,
// or nil when the page is the last; key gives a row's time and id.
func PageCursor[T any](list []T, f agentline.SessionFilter, key func(T) Cursor) *string {
	_, next := Next(list, f.Limit-1, key)
	return next
}

// ID parses an optional id filter named name; "" is 0, no filter.
func ID(v, name string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, agentline.Invalid(name, "%s must be a positive id", name)
	}
	return n, nil
}

// Time parses an RFC 3339 time or a date (YYYY-MM-DD, midnight UTC), so
// that a person can type a range by hand; "" is the zero time, no bound.
func Time(v, name string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, agentline.Invalid(name, "%s must be an RFC 3339 time or a date such as 2026-03-01", name)
}
