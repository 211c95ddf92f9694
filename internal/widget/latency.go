package widget

import (
	"github.com/agentline/agentline"
)

// latencyRow is one agent version's turn latencies on one UTC day (of the
// conversations' start), on every channel together.
type latencyRow struct {
	Day     string `json:"day"`
	AgentID int64  `json:"agent_id"`
	// AgentVersion is null for conversations from before versions began.
	AgentVersion *int `json:"agent_version"`
	agentline.TurnLatency
}

// latencyByAgentDay ranks the project's turn latencies per agent, version
// and day.
func latencyByAgentDay(samples []agentline.LatencySample) []latencyRow {
	type key struct {
		day     string
		agent   int64
		version int // 0: before versions began
	}
	groups := ordered[key, []int64]{list: [][]int64{}}
	var keys []key
	for _, s := range samples {
		k := key{s.Day, s.AgentID, versionKey(s.Version)}
		if _, seen := groups.index[k]; !seen {
			keys = append(keys, k)
		}
		g := groups.at(k, func(key) []int64 { return nil })
		*g = append(*g, s.MS)
	}
	out := make([]latencyRow, 0, len(keys))
	for i, k := range keys {
		row := latencyRow{Day: k.day, AgentID: k.agent, TurnLatency: *agentline.SummarizeLatency(groups.list[i])}
		if k.version != 0 {
			row.AgentVersion = &k.version
		}
		out = append(out, row)
	}
	return out
}

func versionKey(v *int) int {
	if v == nil {
		return 0
	}
	return *v
}

// withTurnLatency fills each version's mean turn latency in the range.
func withTurnLatency(versions []agentline.VersionStat, samples []agentline.LatencySample) {
	type key struct {
		agent   int64
		version int
	}
	sum, n := map[key]int64{}, map[key]int64{}
	for _, s := range samples {
		k := key{s.AgentID, versionKey(s.Version)}
		sum[k] += s.MS
		n[k]++
	}
	for i, v := range versions {
		if k := (key{v.AgentID, versionKey(v.AgentVersion)}); n[k] > 0 {
			avg := float64(sum[k]) / float64(n[k])
			versions[i].AvgTurnLatencyMS = &avg
		}
	}
}
