package widget

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Paging of GET /api/projects/{project_id}/sessions.
const (
	defaultPageSize = 50
	maxPageSize     = 200
	maxRange        = 366 * 24 * time.Hour
)

// SessionView is one session with its transcript, tool calls and errors,
// as the sessions list shows it.
type SessionView struct {
	agentline.WidgetSession
	Transcript []transcriptLine  `json:"transcript"`
	ToolCalls  []json.RawMessage `json:"tool_calls"` // replaces the count of the same name
	Errors     []json.RawMessage `json:"errors"`     // replaces the count of the same name
}

type transcriptLine struct {
	Role string    `json:"role"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

func (h *Handler) listSessions(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	f, err := ListFilter(r.URL.Query())
	if err != nil {
		return err
	}
	// One more than asked tells whether there is a next page.
	f.Limit++
	list, err := h.store.WidgetSessions(r.Context(), projectID, f)
	if err != nil {
		return err
	}
	list, next := Page(list, f)
	out := make([]SessionView, len(list))
	for i, s := range list {
		out[i] = NewSessionView(s)
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Sessions   []SessionView `json:"sessions"`
		NextOffset *int          `json:"next_offset"`
	}{out, next})
	return nil
}

// NewSessionView builds the view of a session and its events.
func NewSessionView(s agentline.SessionWithEvents) SessionView {
	v := SessionView{WidgetSession: s.WidgetSession, Transcript: []transcriptLine{}, ToolCalls: []json.RawMessage{}, Errors: []json.RawMessage{}}
	for _, e := range s.Events {
		switch e.Type {
		case agentline.EventTranscript:
			var t transcriptLine
			json.Unmarshal(e.Data, &t)
			t.At = e.At
			v.Transcript = append(v.Transcript, t)
		case agentline.EventToolCall:
			v.ToolCalls = append(v.ToolCalls, withAt(e))
		case agentline.EventError:
			v.Errors = append(v.Errors, withAt(e))
		}
	}
	return v
}

// ListFilter parses the query of a paged listing (sessions, leads):
// channel_id, agent_id, from, to (RFC 3339 or a date), limit, offset.
func ListFilter(q url.Values) (agentline.SessionFilter, error) {
	f := agentline.SessionFilter{Limit: defaultPageSize}
	var err error
	if f.ChannelID, err = queryID(q.Get("channel_id"), "channel_id"); err != nil {
		return f, err
	}
	if f.AgentID, err = queryID(q.Get("agent_id"), "agent_id"); err != nil {
		return f, err
	}
	if f.From, err = queryTime(q.Get("from"), "from"); err != nil {
		return f, err
	}
	if f.To, err = queryTime(q.Get("to"), "to"); err != nil {
		return f, err
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return f, agentline.Invalid("limit", "limit must be between 1 and %d", maxPageSize)
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
	return f, nil
}

// Page cuts a list read with f.Limit one more than asked (as callers of
// ListFilter do) to the page, and returns the next page's offset, or nil
// when this page is the last.
func Page[T any](list []T, f agentline.SessionFilter) ([]T, *int) {
	limit := f.Limit - 1
	if len(list) <= limit {
		return list, nil
	}
	n := f.Offset + limit
	return list[:limit], &n
}

// withAt is the event's data object with its time added as "at".
func withAt(e agentline.SessionEvent) json.RawMessage {
	m := map[string]json.RawMessage{}
	json.Unmarshal(e.Data, &m)
	at, _ := json.Marshal(e.At)
	m["at"] = at
	b, _ := json.Marshal(m)
	return b
}

// analyticsTotals are sums over sessions.
type analyticsTotals struct {
	Sessions  int64   `json:"sessions"`
	Minutes   float64 `json:"minutes"`
	ToolCalls int64   `json:"tool_calls"`
	Errors    int64   `json:"errors"`
}

func (t *analyticsTotals) add(r agentline.AnalyticsRow) {
	t.Sessions += r.Sessions
	t.Minutes += r.Minutes
	t.ToolCalls += r.ToolCalls
	t.Errors += r.Errors
}

func (h *Handler) analytics(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	to, err := queryTime(q.Get("to"), "to")
	if err != nil {
		return err
	}
	if to.IsZero() {
		to = h.now().UTC()
	}
	from, err := queryTime(q.Get("from"), "from")
	if err != nil {
		return err
	}
	if from.IsZero() {
		from = to.Add(-30 * 24 * time.Hour)
	}
	if !from.Before(to) {
		return agentline.Invalid("from", "from must be before to")
	}
	if to.Sub(from) > maxRange {
		return agentline.Invalid("from", "the range from..to is longer than 366 days")
	}
	rows, err := h.store.SessionAnalytics(r.Context(), projectID, from, to)
	if err != nil {
		return err
	}
	type day struct {
		Day string `json:"day"`
		analyticsTotals
	}
	type channel struct {
		ChannelID int64 `json:"channel_id"`
		analyticsTotals
	}
	var total analyticsTotals
	days, channels := []day{}, []channel{}
	dayIndex, channelIndex := map[string]int{}, map[int64]int{}
	for _, row := range rows {
		total.add(row)
		i, ok := dayIndex[row.Day]
		if !ok {
			i = len(days)
			dayIndex[row.Day] = i
			days = append(days, day{Day: row.Day})
		}
		days[i].add(row)
		j, ok := channelIndex[row.ChannelID]
		if !ok {
			j = len(channels)
			channelIndex[row.ChannelID] = j
			channels = append(channels, channel{ChannelID: row.ChannelID})
		}
		channels[j].add(row)
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		From      time.Time                `json:"from"`
		To        time.Time                `json:"to"`
		Totals    analyticsTotals          `json:"totals"`
		ByDay     []day                    `json:"by_day"`
		ByChannel []channel                `json:"by_channel"`
		Rows      []agentline.AnalyticsRow `json:"rows"`
	}{from, to, total, days, channels, rows})
	return nil
}

func queryID(v, name string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, agentline.Invalid(name, "%s must be a positive id", name)
	}
	return n, nil
}

// queryTime parses an RFC 3339 time or a date (YYYY-MM-DD, midnight UTC).
func queryTime(v, name string) (time.Time, error) {
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
