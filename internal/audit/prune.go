package audit

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
)

// PruneStore deletes the entries written before a cutoff.
type PruneStore interface {
	PruneAuditLog(ctx context.Context, cutoff time.Time) (int64, error)
}

// DefaultRetentionDays is how long an entry is kept when the setting is
// not given: a year, what audits commonly ask for.
const DefaultRetentionDays = 365

// Pruner is the worker of the daily PruneAuditLog job (River's leader
// inserts it, so it runs once per deployment).
type Pruner struct {
	river.WorkerDefaults[agentline.PruneAuditLog]
	Store PruneStore
	// RetentionDays is how many days an entry is kept
	// (AGENTLINE_AUDIT_RETENTION_DAYS); 0 is DefaultRetentionDays.
	RetentionDays int
	Logger        *slog.Logger
	Now           func() time.Time
}

// Interval is how often the prune runs: entries are kept in days, so a
// day late is at most a day more.
func (p *Pruner) Interval() time.Duration { return 24 * time.Hour }

// Work runs one prune.
func (p *Pruner) Work(ctx context.Context, _ *river.Job[agentline.PruneAuditLog]) error {
	_, err := p.Prune(ctx)
	return err
}

// Prune deletes the entries older than the retention now, and says how
// many.
func (p *Pruner) Prune(ctx context.Context) (int64, error) {
	now, days := time.Now, p.RetentionDays
	if p.Now != nil {
		now = p.Now
	}
	if days <= 0 {
		days = DefaultRetentionDays
	}
	n, err := p.Store.PruneAuditLog(ctx, now().AddDate(0, 0, -days))
	if err != nil {
		return 0, fmt.Errorf("prune audit log: %w", err)
	}
	if n > 0 && p.Logger != nil {
		p.Logger.Info("pruned the audit log", "entries", n, "retention_days", days)
	}
	return n, nil
}
