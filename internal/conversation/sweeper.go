package conversation

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
)

// SweepStore is what the sweeper needs from storage: end the live widget
// sessions of every project that are over (abandoned), each followed by
// ended in its transaction, and give their jobs to the phone analyses that
// waited too long for their call's log; each says how many.
type SweepStore interface {
	AbandonIdleSessions(ctx context.Context, idleBefore, connectBefore time.Time, ended agentline.ConversationFollowUp) (int, error)
	QueueAnalysesAwaitingLog(ctx context.Context, before time.Time, limit int) (int, error)
}

// Sweeper is the worker of the recurring SweepConversations job: a widget
// session with no event (heartbeats included) for IdleTimeout ends as
// abandoned at its last event; a live chat that never connected within
// ConnectTimeout of its creation ends as abandoned too. A phone call's
// analysis that has waited agentline.CallLogWait for the call's log gets
// its job (see RelayEnded).
type Sweeper struct {
	river.WorkerDefaults[agentline.SweepConversations]
	Store          SweepStore
	IdleTimeout    time.Duration
	ConnectTimeout time.Duration
	Logger         *slog.Logger
	Now            func() time.Time
}

// Interval is how often the sweep runs: a quarter of the idle timeout,
// between 1 s and 30 s, so a session ends within 1.25 idle timeouts.
func (s *Sweeper) Interval() time.Duration {
	return min(max(s.IdleTimeout/4, time.Second), 30*time.Second)
}

// Work runs one sweep.
func (s *Sweeper) Work(ctx context.Context, _ *river.Job[agentline.SweepConversations]) error {
	return s.Sweep(ctx)
}

// Sweep ends the sessions that are over now and queues the analyses that
// have waited long enough for a log.
func (s *Sweeper) Sweep(ctx context.Context) error {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	t := now().UTC()
	n, err := s.Store.AbandonIdleSessions(ctx, t.Add(-s.IdleTimeout), t.Add(-s.ConnectTimeout), Ended)
	if err != nil {
		return fmt.Errorf("sweep conversations: %w", err)
	}
	if n > 0 && s.Logger != nil {
		s.Logger.Info("ended idle conversations as abandoned", "count", n)
	}
	for range maxAnalysisBatches {
		n, err := s.Store.QueueAnalysesAwaitingLog(ctx, t.Add(-agentline.CallLogWait), analysisBatch)
		if err != nil {
			return fmt.Errorf("sweep conversations: %w", err)
		}
		if n > 0 && s.Logger != nil {
			s.Logger.Info("analysing calls whose log did not come", "count", n)
		}
		if n < analysisBatch {
			break
		}
	}
	return nil
}

// One sweep queues at most maxAnalysisBatches batches of analysisBatch
// analyses; the next sweep takes the rest.
const (
	analysisBatch      = 500
	maxAnalysisBatches = 20
)
