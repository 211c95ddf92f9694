package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// maxLatencySamples bounds the turn latencies one analytics answer reads.
const maxLatencySamples = 200000

// TurnLatencies returns the turn latencies of the project's conversations
// started in [from, to), each with its conversation's UTC day, agent and
// agent version (at most maxLatencySamples, oldest days first). Percentiles are no sum:
// the caller ranks them per group.
func (db *DB) TurnLatencies(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.LatencySample, error) {
	rows, err := db.reader().query(ctx, `SELECT day, agent_id, agent_version, data FROM (
		SELECT `+db.utcDay("coalesce(c.started_at, c.created_at)")+` AS day, c.agent_id AS agent_id, c.agent_version AS agent_version, CAST(e.data AS TEXT) AS data
		FROM call_events e JOIN calls c ON c.id = e.call_id
		WHERE c.project_id = ? AND e.type = 'turn_latency' AND coalesce(c.started_at, c.created_at) >= ? AND coalesce(c.started_at, c.created_at) < ?
		UNION ALL
		SELECT `+db.utcDay("ws.started_at")+`, ws.agent_id, ws.agent_version, CAST(e.data AS TEXT)
		FROM session_events e JOIN widget_sessions ws ON ws.id = e.session_id
		WHERE ws.project_id = ? AND e.type = 'turn_latency' AND ws.started_at >= ? AND ws.started_at < ?
	) t ORDER BY day, agent_id, agent_version LIMIT ?`,
		projectID, from.UTC(), to.UTC(), projectID, from.UTC(), to.UTC(), maxLatencySamples)
	if err != nil {
		return nil, fmt.Errorf("turn latencies: %w", err)
	}
	defer rows.Close()
	out := []agentline.LatencySample{}
	for rows.Next() {
		var s agentline.LatencySample
		var data string
		var version sql.NullInt64
		if err := rows.Scan(&s.Day, &s.AgentID, &version, &data); err != nil {
			return nil, err
		}
		if version.Valid {
			v := int(version.Int64)
			s.Version = &v
		}
		var d struct {
			LatencyMS *int64 `json:"latency_ms"`
		}
		if json.Unmarshal([]byte(data), &d) == nil && d.LatencyMS != nil {
			s.MS = *d.LatencyMS
			out = append(out, s)
		}
	}
	return out, rows.Err()
}
