package agentline

import (
	"slices"
	"time"
)

// EventTurnLatency is a turn's latency, as a phone call's log records it
// and as the widget SDK reports it (data.latency_ms): from the caller's or
// visitor's end of speech to the first audio of the agent's answer.
const EventTurnLatency = "turn_latency"

// MaxTurnLatency bounds a reported turn latency: a longer wait is not a
// turn being answered but a client's clock or state gone wrong.
const MaxTurnLatency = 60 * time.Second

// MaxTurnLatencies bounds the turn latencies kept of one conversation.
const MaxTurnLatencies = 500

// TurnLatencyBuckets are the buckets of the agentline_turn_latency_seconds
// histogram, in seconds, on every channel alike.
func TurnLatencyBuckets() []float64 {
	return []float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 5, 10}
}

// TurnLatency summarizes a conversation's turn latencies, in
// milliseconds; Turns is how many were measured.
type TurnLatency struct {
	P50MS int64 `json:"p50_ms"`
	P95MS int64 `json:"p95_ms"`
	MaxMS int64 `json:"max_ms"`
	Turns int   `json:"turns"`
}

// SummarizeLatency returns the summary of turn latencies (ms), nil for
// none. Percentiles are nearest-rank: a value some turn really had.
func SummarizeLatency(ms []int64) *TurnLatency {
	if len(ms) == 0 {
		return nil
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	return &TurnLatency{P50MS: Percentile(s, 50), P95MS: Percentile(s, 95), MaxMS: s[len(s)-1], Turns: len(s)}
}

// Percentile is the nearest-rank p-th percentile of sorted (not empty).
func Percentile(sorted []int64, p int) int64 {
	i := (p*len(sorted) + 99) / 100 // ceil(p/100 * n), 1-based
	return sorted[max(i, 1)-1]
}

// AttachLatency puts each turn latency on the agent line answering it, the
// first agent line after it; a latency after the last agent line goes on
// the last agent line still without one (a client may report it after the
// line). lat[i] came at at[i].
func AttachLatency(lines []Line, lat []int64, at []time.Time) {
	for i, ms := range lat {
		j := slices.IndexFunc(lines, func(l Line) bool {
			return l.Speaker == "agent" && l.LatencyMS == nil && !l.At.Before(at[i])
		})
		if j < 0 {
			for k := len(lines) - 1; k >= 0; k-- {
				if lines[k].Speaker == "agent" && lines[k].LatencyMS == nil {
					j = k
					break
				}
			}
		}
		if j >= 0 {
			v := ms
			lines[j].LatencyMS = &v
		}
	}
}

// LatencySample is one turn latency with its conversation's UTC day,
// agent and agent version (nil before versions began), what the analytics
// groups.
type LatencySample struct {
	Day     string
	AgentID int64
	Version *int
	MS      int64
}
