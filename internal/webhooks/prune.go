package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
)

// DefaultRetention is how long finished deliveries, their attempts and
// their events are kept (AGENTLINE_WEBHOOK_RETENTION).
const DefaultRetention = 30 * 24 * time.Hour

// PruneStore is what the pruner needs from storage.
type PruneStore interface {
	PruneWebhooks(ctx context.Context, before time.Time) (deliveries, events int64, err error)
}

// Pruner is the worker of the recurring PruneWebhooks job (River's leader
// inserts it, so it runs once per deployment whatever the number of
// instances): without it the event, delivery and attempt rows of every
// event ever sent would grow forever.
type Pruner struct {
	river.WorkerDefaults[agentline.PruneWebhooks]
	Store PruneStore
	// Retention is how long after it finished a delivery is kept (default
	// DefaultRetention). A pending delivery is kept, whatever its age.
	Retention time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
}

// Interval is how often the pruning runs. A run is bounded by the job
// queue's job timeout (a minute at most); a backlog is deleted in batches,
// and what one run leaves the next deletes.
func (p *Pruner) Interval() time.Duration { return time.Hour }

// Work runs one pruning.
func (p *Pruner) Work(ctx context.Context, _ *river.Job[agentline.PruneWebhooks]) error {
	return p.Prune(ctx)
}

// Prune deletes what is older than the retention period now.
func (p *Pruner) Prune(ctx context.Context) error {
	now, keep := time.Now, p.Retention
	if p.Now != nil {
		now = p.Now
	}
	if keep <= 0 {
		keep = DefaultRetention
	}
	deliveries, events, err := p.Store.PruneWebhooks(ctx, now().Add(-keep))
	if err != nil {
		return fmt.Errorf("prune webhooks: %w", err)
	}
	if (deliveries > 0 || events > 0) && p.Logger != nil {
		p.Logger.Info("pruned webhook deliveries and events", "deliveries", deliveries, "events", events, "retention", keep.String())
	}
	return nil
}
