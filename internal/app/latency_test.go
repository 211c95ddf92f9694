package app_test

import (
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The SDK's turn_latency reports land on the widget conversation; reports
// that are not a bounded whole number of ms are refused, whole batch.
func TestWidgetTurnLatencyReports(t *testing.T) {
	t.Parallel()
	w := startWidgetSite(t, store.SQLite, nil)
	s, tok, p, a := w.s, w.token, w.project, w.agent
	widget := func(path string, body any) *apptest.Response { return w.do(t, "POST", path, body) }
	sessionID := w.session(t)
	now := time.Now().UTC()
	line := func(role, text string, at time.Time) map[string]any {
		return map[string]any{"type": "transcript", "at": at, "data": map[string]string{"role": role, "text": text}}
	}
	latency := func(ms any, at time.Time) map[string]any {
		return map[string]any{"type": "turn_latency", "at": at, "data": map[string]any{"latency_ms": ms}}
	}
	for _, bad := range []any{-1, 60001, 1.5, "300", nil} {
		r := widget("/widget/v1/analytics", map[string]any{"session_id": sessionID, "events": []any{latency(bad, now)}})
		if r.Status != 400 && r.Status != 422 {
			t.Errorf("latency_ms %v: status %d, want refused", bad, r.Status)
		}
	}
	extra := map[string]any{"type": "turn_latency", "data": map[string]any{"latency_ms": 5, "note": "x"}}
	if r := widget("/widget/v1/analytics", map[string]any{"session_id": sessionID, "events": []any{extra}}); r.Status != 400 && r.Status != 422 {
		t.Errorf("extra data field: status %d, want refused", r.Status)
	}
	r := widget("/widget/v1/analytics", map[string]any{"session_id": sessionID, "events": []any{
		line("user", "Hello?", now), latency(640, now.Add(time.Second)), line("assistant", "Hi there.", now.Add(2*time.Second)),
		line("user", "Open today?", now.Add(3*time.Second)), line("assistant", "Until six.", now.Add(4*time.Second)), latency(380, now.Add(5*time.Second)),
	}})
	if r.Status != 202 {
		t.Fatalf("report: %s", r)
	}
	var conv agentline.Conversation
	s.Must(t, 200, "GET", "/api/conversations/"+sessionID, tok, nil, &conv)
	if conv.Latency == nil || *conv.Latency != (agentline.TurnLatency{P50MS: 380, P95MS: 640, MaxMS: 640, Turns: 2}) {
		t.Fatalf("latency = %+v", conv.Latency)
	}
	if len(conv.Transcript) != 4 || conv.Transcript[1].LatencyMS == nil || *conv.Transcript[1].LatencyMS != 640 ||
		conv.Transcript[3].LatencyMS == nil || *conv.Transcript[3].LatencyMS != 380 || conv.Transcript[0].LatencyMS != nil {
		t.Fatalf("transcript = %+v", conv.Transcript)
	}
	var an struct {
		Conversations struct {
			TurnLatency []struct {
				Day          string `json:"day"`
				AgentID      int64  `json:"agent_id"`
				AgentVersion *int   `json:"agent_version"`
				agentline.TurnLatency
			} `json:"turn_latency"`
		} `json:"conversations"`
		Versions []agentline.VersionStat `json:"versions"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/analytics", tok, nil, &an)
	rows := an.Conversations.TurnLatency
	if len(rows) != 1 || rows[0].AgentID != a.ID || rows[0].Day != now.Format(time.DateOnly) ||
		rows[0].AgentVersion == nil || *rows[0].AgentVersion != 1 ||
		rows[0].TurnLatency != (agentline.TurnLatency{P50MS: 380, P95MS: 640, MaxMS: 640, Turns: 2}) {
		t.Fatalf("analytics turn_latency = %+v", rows)
	}
	// The version comparison carries the mean: (640 + 380) / 2.
	if v := an.Versions; len(v) != 1 || v[0].AvgTurnLatencyMS == nil || *v[0].AvgTurnLatencyMS != 510 {
		t.Fatalf("analytics versions = %+v", v)
	}
}
