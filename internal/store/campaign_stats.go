package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agentline/agentline"
)

// CampaignStats sums, per campaign of the project, the dials made in
// [from, to) (agentline.CampaignStat), in the order the campaigns were
// made; a campaign with no dial in the range is left out. An outcome is
// the dial's, which the dialing engine writes when the call ends; an
// opt-out is also read from its call's end reason (opted_out), which the
// call's relay writes itself, so it counts however the engine spells the
// dial's outcome.
func (db *DB) CampaignStats(ctx context.Context, projectID int64, from, to time.Time) ([]agentline.CampaignStat, error) {
	optedOut := `(d.outcome = 'opted_out' OR c.end_reason = 'opted_out')`
	is := func(cond, as string) string { return `CASE WHEN ` + cond + ` THEN 1 ELSE 0 END AS ` + as }
	rows, err := db.reader().query(ctx, `SELECT x.campaign_id, k.name, count(*), sum(x.answered), sum(x.voicemail), sum(x.busy),
		sum(x.no_answer), sum(x.failed), sum(x.opted_out), sum(x.evaluated), sum(x.successes), sum(x.duration_s)
		FROM (SELECT d.campaign_id,
			`+is(`d.outcome = 'completed' OR `+optedOut, "answered")+`,
			`+is(`d.outcome = 'voicemail'`, "voicemail")+`, `+is(`d.outcome = 'busy'`, "busy")+`,
			`+is(`d.outcome = 'no_answer'`, "no_answer")+`, `+is(`d.outcome = 'failed'`, "failed")+`,
			`+is(optedOut, "opted_out")+`, coalesce(c.duration_s, 0) AS duration_s`+
		analysisStats("'call_' || c.id", " AS evaluated", " AS successes")+`
			FROM campaign_dials d LEFT JOIN calls c ON c.id = d.call_id
			WHERE d.project_id = ? AND d.dialed_at >= ? AND d.dialed_at < ?) x
		JOIN campaigns k ON k.id = x.campaign_id
		GROUP BY x.campaign_id, k.name ORDER BY x.campaign_id`, projectID, from.UTC(), to.UTC())
	if err != nil {
		return nil, fmt.Errorf("campaign stats: %w", err)
	}
	defer rows.Close()
	out := []agentline.CampaignStat{}
	for rows.Next() {
		var s agentline.CampaignStat
		var secs int64
		if err := rows.Scan(&s.CampaignID, &s.Name, &s.Dialed, &s.Answered, &s.Voicemail, &s.Busy, &s.NoAnswer, &s.Failed,
			&s.OptedOut, &s.Evaluated, &s.Successes, &secs); err != nil {
			return nil, err
		}
		s.SuccessRate, s.Minutes = agentline.SuccessRate(s.Successes, s.Evaluated), float64(secs)/60
		out = append(out, s)
	}
	return out, rows.Err()
}
