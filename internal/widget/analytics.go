package widget

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// analyticsQuery authorizes PROJECT:VIEW on the path's project and reads
// the range the analytics (or its CSV) covers.
func (h *Handler) analyticsQuery(r *http.Request) (projectID int64, from, to time.Time, err error) {
	if projectID, _, err = h.auth.AuthorizeProjectPath(r, agentline.PermView); err != nil {
		return 0, from, to, err
	}
	from, to, err = h.analyticsRange(r.URL.Query())
	return projectID, from, to, err
}

// analyticsRange reads from and to (default: the last 30 days).
func (h *Handler) analyticsRange(q url.Values) (from, to time.Time, err error) {
	if to, err = listing.Time(q.Get("to"), "to"); err != nil {
		return from, to, err
	}
	if to.IsZero() {
		to = h.now().UTC()
	}
	if from, err = listing.Time(q.Get("from"), "from"); err != nil {
		return from, to, err
	}
	if from.IsZero() {
		from = to.Add(-30 * 24 * time.Hour)
	}
	if !from.Before(to) {
		return from, to, agentline.Invalid("from", "from must be before to")
	}
	if to.Sub(from) > maxRange {
		return from, to, agentline.Invalid("from", "the range from..to is longer than 366 days")
	}
	return from, to, nil
}

// convTotals are sums over conversations of every kind, and leads.
type convTotals struct {
	Conversations int64   `json:"conversations"`
	Minutes       float64 `json:"minutes"`
	ToolCalls     int64   `json:"tool_calls"`
	ToolErrors    int64   `json:"tool_errors"`
	Leads         int64   `json:"leads"`
	// Evaluated counts the conversations whose analysis judged success,
	// Successes the successful ones; SuccessRate is their ratio (null
	// when none was evaluated).
	Evaluated   int64    `json:"evaluated"`
	Successes   int64    `json:"successes"`
	SuccessRate *float64 `json:"success_rate"`
}

func (t *convTotals) add(s agentline.ConversationStat) {
	t.Conversations += s.Conversations
	t.Minutes += float64(s.DurationMS) / 60000
	t.ToolCalls += s.ToolCalls
	t.ToolErrors += s.ToolErrors
	t.Evaluated += s.Evaluated
	t.Successes += s.Successes
	t.SuccessRate = agentline.SuccessRate(t.Successes, t.Evaluated)
}

// group is one key's totals, such as one day's or one agent's.
type group[K comparable] struct {
	Key K
	convTotals
}

// ordered is a list of rows, one per key, in the order keys first appear:
// the shape of every by_day, by_channel, ... list of the analytics.
type ordered[K comparable, R any] struct {
	list  []R
	index map[K]int
}

// at is k's row, made by row the first time k is seen.
func (o *ordered[K, R]) at(k K, row func(K) R) *R {
	if o.index == nil {
		o.index = map[K]int{}
	}
	i, ok := o.index[k]
	if !ok {
		i = len(o.list)
		o.index[k] = i
		o.list = append(o.list, row(k))
	}
	return &o.list[i]
}

// groups sums totals per key, in the order keys first appear.
type groups[K comparable] struct {
	ordered[K, group[K]]
}

func (g *groups[K]) at(k K) *convTotals {
	return &g.ordered.at(k, func(k K) group[K] { return group[K]{Key: k} }).convTotals
}

// rows is the groups as JSON objects with the key under name.
func (g *groups[K]) rows(name string) []map[string]any {
	out := make([]map[string]any, 0, len(g.list))
	for _, x := range g.list {
		out = append(out, map[string]any{name: x.Key, "conversations": x.Conversations, "minutes": x.Minutes,
			"tool_calls": x.ToolCalls, "tool_errors": x.ToolErrors, "leads": x.Leads,
			"evaluated": x.Evaluated, "successes": x.Successes, "success_rate": x.SuccessRate})
	}
	return out
}

// channelKey names a channel ("channel:3") or a phone number ("number:4").
func channelKey(s agentline.ConversationStat) string {
	switch {
	case s.ChannelID != nil:
		return "channel:" + strconv.FormatInt(*s.ChannelID, 10)
	case s.NumberID != nil:
		return "number:" + strconv.FormatInt(*s.NumberID, 10)
	}
	return "number:none"
}

// conversationAnalytics is the cross-channel part of the analytics answer.
type conversationAnalytics struct {
	Totals     convTotals                   `json:"totals"`
	ByDay      []map[string]any             `json:"by_day"`
	ByChannel  []map[string]any             `json:"by_channel"`
	ByAgent    []map[string]any             `json:"by_agent"`
	ByKind     []map[string]any             `json:"by_kind"`
	ByStatus   []map[string]any             `json:"by_status"`
	EndReasons []map[string]any             `json:"end_reasons"`
	Rows       []agentline.ConversationStat `json:"rows"`
	Leads      []agentline.LeadStat         `json:"leads"`
	// TurnLatency is per agent and day: see latencyRow.
	TurnLatency []latencyRow `json:"turn_latency"`
}

func summarize(stats []agentline.ConversationStat, leads []agentline.LeadStat) conversationAnalytics {
	var total convTotals
	var days, channels, kinds, statuses, reasons groups[string]
	var agents groups[int64]
	for _, s := range stats {
		total.add(s)
		for _, t := range []*convTotals{days.at(s.Day), channels.at(channelKey(s)), agents.at(s.AgentID), kinds.at(s.Kind),
			statuses.at(s.Status), reasons.at(s.EndReason)} {
			t.add(s)
		}
	}
	for _, l := range leads {
		total.Leads += l.Leads
		days.at(l.Day).Leads += l.Leads
		channels.at("channel:" + strconv.FormatInt(l.ChannelID, 10)).Leads += l.Leads
	}
	return conversationAnalytics{Totals: total, ByDay: days.rows("day"), ByChannel: channels.rows("channel"),
		ByAgent: agents.rows("agent_id"), ByKind: kinds.rows("kind"), ByStatus: statuses.rows("status"),
		EndReasons: reasons.rows("end_reason"), Rows: stats, Leads: leads}
}

// stats reads the rows the cross-channel analytics and its CSV are made of.
func (h *Handler) stats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.ConversationStat, []agentline.LeadStat, error) {
	stats, err := h.store.ConversationStats(ctx, projectID, from, to)
	if err != nil {
		return nil, nil, err
	}
	leads, err := h.store.LeadStats(ctx, projectID, from, to)
	return stats, leads, err
}

// analyticsCSV serves GET /api/projects/{project_id}/analytics.csv: the
// rows of the analytics answer, conversations then leads (kind "lead").
func (h *Handler) analyticsCSV(w http.ResponseWriter, r *http.Request) error {
	projectID, from, to, err := h.analyticsQuery(r)
	if err != nil {
		return err
	}
	stats, leads, err := h.stats(r.Context(), projectID, from, to)
	if err != nil {
		return err
	}
	cw := httpx.NewCSV(w, fmt.Sprintf("analytics-project-%d.csv", projectID))
	cw.Write([]string{"day", "kind", "channel_id", "number_id", "agent_id", "status", "end_reason",
		"conversations", "minutes", "tool_calls", "tool_errors", "leads", "evaluated", "successes", "success_rate"})
	id := func(p *int64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatInt(*p, 10)
	}
	n := strconv.FormatInt
	for _, s := range stats {
		cw.Write([]string{s.Day, s.Kind, id(s.ChannelID), id(s.NumberID), n(s.AgentID, 10), s.Status, s.EndReason,
			n(s.Conversations, 10), strconv.FormatFloat(float64(s.DurationMS)/60000, 'f', 3, 64), n(s.ToolCalls, 10), n(s.ToolErrors, 10), "0",
			n(s.Evaluated, 10), n(s.Successes, 10), rate(s.SuccessRate)})
	}
	for _, l := range leads {
		cw.Write([]string{l.Day, "lead", n(l.ChannelID, 10), "", "", "", "", "0", "0", "0", "0", n(l.Leads, 10), "0", "0", ""})
	}
	if err := cw.Flush(); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		httpx.Logger(r.Context()).Warn("analytics export cut short", "project_id", projectID, "err", err)
	}
	return nil
}

// rate is a success rate for CSV: "0.750", or "" when there is none.
func rate(r *float64) string {
	if r == nil {
		return ""
	}
	return strconv.FormatFloat(*r, 'f', 3, 64)
}
