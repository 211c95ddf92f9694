package widget

import (
	"net/http"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// maxRange bounds the from..to range of GET /api/projects/{project_id}/analytics.
const maxRange = 366 * 24 * time.Hour

func (h *Handler) listSessions(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	f, err := listing.Filter(r.URL.Query())
	if err != nil {
		return err
	}
	// One more than asked tells whether there is a next page.
	f.Limit++
	list, err := h.store.WidgetSessions(r.Context(), projectID, f)
	if err != nil {
		return err
	}
	cursor := listing.PageCursor(list, f, func(s agentline.SessionWithEvents) listing.Cursor {
		return listing.AfterTime(s.StartedAt, s.ID)
	})
	list, next := listing.Page(list, f)
	out := make([]agentline.SessionView, len(list))
	for i, s := range list {
		out[i] = agentline.NewSessionView(s)
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Sessions   []agentline.SessionView `json:"sessions"`
		NextCursor *string                 `json:"next_cursor"`
		NextOffset *int                    `json:"next_offset"` // deprecated
	}{out, cursor, next})
	return nil
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
	projectID, from, to, err := h.analyticsQuery(r)
	if err != nil {
		return err
	}
	rows, err := h.store.SessionAnalytics(r.Context(), projectID, from, to)
	if err != nil {
		return err
	}
	stats, leads, err := h.stats(r.Context(), projectID, from, to)
	if err != nil {
		return err
	}
	campaigns, err := h.store.CampaignStats(r.Context(), projectID, from, to)
	if err != nil {
		return err
	}
	versions, err := h.store.VersionStats(r.Context(), projectID, from, to)
	if err != nil {
		return err
	}
	samples, err := h.store.TurnLatencies(r.Context(), projectID, from, to)
	if err != nil {
		return err
	}
	convs := summarize(stats, leads)
	convs.TurnLatency = latencyByAgentDay(samples)
	withTurnLatency(versions, samples)
	type day struct {
		Day string `json:"day"`
		analyticsTotals
	}
	type channel struct {
		ChannelID int64 `json:"channel_id"`
		analyticsTotals
	}
	var total analyticsTotals
	days, channels := ordered[string, day]{list: []day{}}, ordered[int64, channel]{list: []channel{}}
	for _, row := range rows {
		total.add(row)
		days.at(row.Day, func(d string) day { return day{Day: d} }).add(row)
		channels.at(row.ChannelID, func(id int64) channel { return channel{ChannelID: id} }).add(row)
	}
	// totals, by_day, by_channel and rows are the widget sessions' (as
	// before conversations); conversations covers every kind and leads;
	// campaigns the dials of each campaign; versions compares each agent
	// version's conversations.
	httpx.WriteJSON(w, http.StatusOK, struct {
		From          time.Time                `json:"from"`
		To            time.Time                `json:"to"`
		Totals        analyticsTotals          `json:"totals"`
		ByDay         []day                    `json:"by_day"`
		ByChannel     []channel                `json:"by_channel"`
		Rows          []agentline.AnalyticsRow `json:"rows"`
		Conversations conversationAnalytics    `json:"conversations"`
		Campaigns     []agentline.CampaignStat `json:"campaigns"`
		Versions      []agentline.VersionStat  `json:"versions"`
	}{from, to, total, days.list, channels.list, rows, convs, campaigns, versions})
	return nil
}
