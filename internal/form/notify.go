package form

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
)

// DefaultBackoff returns the wait before each retry of a notify_url
// delivery: six attempts over about three minutes, then the lead is logged
// as not delivered (it stays stored). Each call returns a new slice, so a
// notifier's schedule is its own.
func DefaultBackoff() []time.Duration {
	return []time.Duration{time.Second, 3 * time.Second, 10 * time.Second, 30 * time.Second, 2 * time.Minute}
}

// notifyTimeout bounds one delivery attempt.
const notifyTimeout = 10 * time.Second

// NotifyLead is the durable job that POSTs one lead to its form's
// notify_url. It is enqueued in the transaction that stores the lead, so
// the delivery survives a restart, and runs once across instances.
type NotifyLead struct {
	URL       string          `json:"url"`
	Body      json.RawMessage `json:"body"` // a Payload
	LeadID    int64           `json:"lead_id"`
	ChannelID int64           `json:"channel_id"`
	ProjectID int64           `json:"project_id"`
}

// Kind names NotifyLead's worker.
func (NotifyLead) Kind() string { return "form_notify" }

// Payload is the JSON body POSTed to notify_url.
type Payload struct {
	Event   string         `json:"event"` // lead.created
	Lead    agentline.Lead `json:"lead"`
	Channel struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"channel"`
}

// notifyJob is the job that delivers lead to ch's notify_url; ok is false
// when the form has none.
func notifyJob(ch agentline.Channel, lead agentline.Lead) (job NotifyLead, ok bool, err error) {
	if ch.Settings.Form == nil || ch.Settings.Form.NotifyURL == "" {
		return job, false, nil
	}
	p := Payload{Event: agentline.EventLeadCreated, Lead: lead}
	p.Channel.ID, p.Channel.Name = ch.ID, ch.Name
	body, err := json.Marshal(p)
	if err != nil {
		return job, false, fmt.Errorf("encode lead %d: %w", lead.ID, err)
	}
	return NotifyLead{URL: ch.Settings.Form.NotifyURL, Body: body, LeadID: lead.ID, ChannelID: ch.ID, ProjectID: lead.ProjectID}, true, nil
}

// AttemptRecorder keeps each try at a delivery, for the console.
type AttemptRecorder interface {
	RecordNotifyAttempt(ctx context.Context, a agentline.NotifyAttempt) error
}

// NotifierOptions configures a Notifier.
type NotifierOptions struct {
	// Client sends the requests: the tool facility's SSRF-guarded client.
	Client *http.Client
	Logger *slog.Logger
	// Attempts, when set, keeps every attempt (the store), so that failing
	// deliveries show in the console, not only in the logs.
	Attempts AttemptRecorder
	// Backoff is the wait before each retry; its length is the number of
	// retries. Nil means DefaultBackoff().
	Backoff []time.Duration
}

// Notifier is the worker of NotifyLead jobs: each run is one attempt; a
// failed one is retried by the job queue after the backoff, up to
// MaxAttempts.
type Notifier struct {
	river.WorkerDefaults[NotifyLead]
	client   *http.Client
	logger   *slog.Logger
	backoff  []time.Duration
	attempts AttemptRecorder
}

// NewNotifier returns the notify_url worker.
func NewNotifier(o NotifierOptions) *Notifier {
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Notifier{client: o.Client, logger: o.Logger, backoff: o.Backoff, attempts: o.Attempts}
}

// MaxAttempts is how many attempts a delivery gets.
func (n *Notifier) MaxAttempts() int { return len(n.backoff) + 1 }

// NextRetry is the time of the retry after job's failed attempt.
func (n *Notifier) NextRetry(job *river.Job[NotifyLead]) time.Time {
	i := min(max(job.Attempt, 1), len(n.backoff)) - 1
	if i < 0 {
		return time.Now()
	}
	return time.Now().Add(n.backoff[i])
}

// Work makes one attempt and records it; a failure is logged and returned
// for the queue to retry, or, on the last attempt, logged as not delivered.
func (n *Notifier) Work(ctx context.Context, job *river.Job[NotifyLead]) error {
	d := job.Args
	log := n.logger.With("lead_id", d.LeadID, "channel_id", d.ChannelID, "project_id", d.ProjectID)
	start := time.Now()
	code, err := n.attempt(ctx, d, job.Attempt)
	last := min(job.MaxAttempts, n.MaxAttempts())
	n.record(ctx, log, agentline.NotifyAttempt{ProjectID: d.ProjectID, ChannelID: d.ChannelID, LeadID: d.LeadID,
		Attempt: job.Attempt, MaxAttempts: last, Delivered: err == nil, StatusCode: code, Error: errText(err),
		LatencyMS: time.Since(start).Milliseconds(), At: start.UTC()})
	if err == nil {
		log.Info("notify: lead delivered", "attempt", job.Attempt)
		return nil
	}
	if job.Attempt >= last {
		log.Error("notify: lead not delivered", "attempts", job.Attempt, "reason", err.Error())
		return river.JobCancel(err)
	}
	log.Warn("notify: attempt failed, retrying", "attempt", job.Attempt, "retry_in", time.Until(n.NextRetry(job)).Round(time.Millisecond), "reason", err.Error())
	return err
}

// record keeps the attempt; failing to is logged, never retried: the
// delivery's outcome does not depend on it.
func (n *Notifier) record(ctx context.Context, log *slog.Logger, a agentline.NotifyAttempt) {
	if n.attempts == nil {
		return
	}
	if err := n.attempts.RecordNotifyAttempt(ctx, a); err != nil {
		log.Warn("notify: attempt not recorded", "attempt", a.Attempt, "err", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// attempt POSTs once and returns the answer's status (0 without one); any
// 2xx answer is a delivery. Errors never hold the URL, whose query may
// carry a token.
func (n *Notifier) attempt(ctx context.Context, d NotifyLead, attempt int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return 0, errors.New("the notify URL cannot be requested")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentline-notify/1")
	req.Header.Set("X-Agentline-Event", agentline.EventLeadCreated)
	// The same key on every attempt lets a receiver drop a repeat of a
	// delivery whose answer was lost.
	req.Header.Set("Idempotency-Key", "lead-"+strconv.FormatInt(d.LeadID, 10))
	req.Header.Set("X-Agentline-Attempt", strconv.Itoa(attempt))
	resp, err := n.client.Do(req)
	if r := egress.Refusal(err); r != "" {
		return 0, errors.New(r) // the reason alone: the URL's query may hold a token
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return 0, ue.Err // without the URL
	}
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return resp.StatusCode, nil
}
