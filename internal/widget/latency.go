package widget

import (
	"context"
	"time"

	"github.com/agentline/agentline"
)

// latencyRow is one agent's turn latencies on one UTC day (of the
// conversations' start), on every channel together.
type latencyRow struct {
	Day     string `json:"day"`
	AgentID int64  `json:"agent_id"`
	agentline.TurnLatency
}

// latencyByAgentDay ranks the project's turn latencies per agent and day. Agent
// versions, once conversations carry one, are a third key here.
func (h *Handler) latencyByAgentDay(ctx context.Context, projectID int64, from, to time.Time) ([]latencyRow, error) {
	samples, err := h.store.TurnLatencies(ctx, projectID, from, to)
	if err != nil {
		return nil, err
	}
	type key struct {
		day   string
		agent int64
	}
	groups := ordered[key, []int64]{list: [][]int64{}}
	var keys []key
	for _, s := range samples {
		k := key{s.Day, s.AgentID}
		if _, seen := groups.index[k]; !seen {
			keys = append(keys, k)
		}
		g := groups.at(k, func(key) []int64 { return nil })
		*g = append(*g, s.MS)
	}
	out := make([]latencyRow, 0, len(keys))
	for i, k := range keys {
		out = append(out, latencyRow{Day: k.day, AgentID: k.agent, TurnLatency: *agentline.SummarizeLatency(groups.list[i])})
	}
	return out, nil
}
