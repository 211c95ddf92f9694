package jobs

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
)

type metrics struct {
	enqueued *prometheus.CounterVec
	finished *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		enqueued: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentline_jobs_enqueued_total",
			Help: "Durable jobs enqueued by this instance, by kind."}, []string{"kind"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentline_jobs_finished_total",
			Help: "Job runs ended in this instance, by kind and result (completed, failed, discarded, cancelled, snoozed)."}, []string{"kind", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agentline_job_run_seconds",
			Help: "How long a job run took, by kind.", Buckets: prometheus.ExponentialBuckets(0.005, 4, 8)}, []string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.enqueued, m.finished, m.duration)
	}
	return m
}

// observe logs and counts the end of every job run until events closes.
func (q *Queue) observe(events <-chan *river.Event) {
	for ev := range events {
		if ev == nil || ev.Job == nil {
			continue
		}
		j := ev.Job
		result := string(ev.Kind)
		log := q.logger.With("job_id", j.ID, "job_kind", j.Kind, "attempt", j.Attempt)
		switch ev.Kind {
		case river.EventKindJobCompleted:
			result = "completed"
			log.Debug("job completed")
		case river.EventKindJobFailed:
			result = "failed"
			msg := ""
			if n := len(j.Errors); n > 0 {
				msg = j.Errors[n-1].Error
			}
			if j.Attempt >= j.MaxAttempts {
				result = "discarded"
				log.Error("job failed for the last time", "err", msg)
			} else {
				log.Warn("job failed, will retry", "err", msg, "retry_at", j.ScheduledAt)
			}
		case river.EventKindJobCancelled:
			result = "cancelled"
			log.Warn("job cancelled")
		case river.EventKindJobSnoozed:
			result = "snoozed"
		}
		q.metrics.finished.WithLabelValues(j.Kind, result).Inc()
		if ev.JobStats != nil {
			q.metrics.duration.WithLabelValues(j.Kind).Observe(ev.JobStats.RunDuration.Seconds())
		}
	}
}

// levelAtLeast drops records below min.
type levelAtLeast struct {
	slog.Handler
	min slog.Level
}

func (h levelAtLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelAtLeast) WithAttrs(a []slog.Attr) slog.Handler {
	return levelAtLeast{h.Handler.WithAttrs(a), h.min}
}

func (h levelAtLeast) WithGroup(name string) slog.Handler {
	return levelAtLeast{h.Handler.WithGroup(name), h.min}
}
