package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
)

// DeliveryStore is what the delivery worker needs from storage.
type DeliveryStore interface {
	PendingDelivery(ctx context.Context, id int64) (agentline.WebhookDelivery, agentline.WebhookEndpoint, error)
	EarlierPending(ctx context.Context, endpointID int64, subject string, id int64) (bool, error)
	RecordAttempt(ctx context.Context, deliveryID int64, a agentline.WebhookAttempt, status string) error
	DisableWebhook(ctx context.Context, id int64, reason string) error
}

// DefaultSpan is how long a delivery is retried, and how long an endpoint
// may fail before it is disabled.
const DefaultSpan = 72 * time.Hour

// attemptTimeout bounds one request.
const attemptTimeout = 10 * time.Second

// maxKept is how much of an answer is stored with its attempt.
const maxKept = 1024

// schedule is the wait after each failed attempt, for DefaultSpan; after
// the last one, every 6 h until the span ends.
var schedule = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour}

const laterEvery = 6 * time.Hour

// DelayAfter is the wait after failed attempt n (1-based) for a retry span
// of span: the schedule above, scaled by span/DefaultSpan, with ±10 %
// jitter.
func DelayAfter(n int, span time.Duration) time.Duration {
	d := laterEvery
	if n >= 1 && n <= len(schedule) {
		d = schedule[n-1]
	}
	return jitter(time.Duration(float64(d) * float64(span) / float64(DefaultSpan)))
}

// jitter is d ±10 %, so that retries made together do not come back
// together.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.2-0.1)*float64(d))
}

// DelivererOptions configures a Deliverer.
type DelivererOptions struct {
	Store DeliveryStore
	// Client sends the requests: the tool facility's SSRF-guarded client.
	// Redirects are never followed.
	Client *http.Client
	Logger *slog.Logger
	// Span is how long a delivery is retried (AGENTLINE_WEBHOOK_RETRY_SPAN).
	Span time.Duration
	// PerEndpoint is how many requests one instance sends to one endpoint
	// at once (default 4).
	PerEndpoint int
	Registerer  prometheus.Registerer
}

// Deliverer is the worker of DeliverWebhook jobs.
type Deliverer struct {
	river.WorkerDefaults[agentline.DeliverWebhook]
	store    DeliveryStore
	client   *http.Client
	logger   *slog.Logger
	span     time.Duration
	gates    *gates
	attempts *prometheus.CounterVec
}

// NewDeliverer returns the delivery worker.
func NewDeliverer(o DelivererOptions) *Deliverer {
	if o.Span <= 0 {
		o.Span = DefaultSpan
	}
	if o.PerEndpoint <= 0 {
		o.PerEndpoint = 4
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	c := *o.Client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.Timeout = attemptTimeout
	d := &Deliverer{store: o.Store, client: &c, logger: o.Logger, span: o.Span, gates: newGates(o.PerEndpoint),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentline_webhook_attempts_total",
			Help: "Webhook delivery attempts, by result (delivered, retry, failed, gone)."}, []string{"result"})}
	if o.Registerer != nil {
		o.Registerer.MustRegister(d.attempts)
	}
	return d
}

// Timeout bounds a job run: one attempt and its bookkeeping.
func (d *Deliverer) Timeout(*river.Job[agentline.DeliverWebhook]) time.Duration {
	return attemptTimeout + 20*time.Second
}

// Work makes one attempt of the delivery. A retry is a snooze until the
// next attempt's time (so River's attempt count is not the delivery's); an
// error is returned only when storage fails, and River retries that.
func (d *Deliverer) Work(ctx context.Context, job *river.Job[agentline.DeliverWebhook]) error {
	del, ep, err := d.store.PendingDelivery(ctx, job.Args.DeliveryID)
	if errors.Is(err, agentline.ErrNotFound) {
		return nil // the endpoint was deleted, deliveries with it
	}
	if err != nil || del.Status != agentline.DeliveryPending {
		return err
	}
	if earlier, err := d.store.EarlierPending(ctx, ep.ID, del.Subject, del.ID); err != nil || earlier {
		if err != nil {
			return err
		}
		return river.JobSnooze(d.orderWait(snoozes(job.Metadata))) // in order: the earlier event of this subject goes first
	}
	release, busyFor := d.gates.acquire(ctx, ep.ID)
	if release == nil {
		return river.JobSnooze(busySnooze(busyFor, rand.Float64()))
	}
	defer release()
	log := d.logger.With("delivery_id", del.ID, "webhook_id", ep.ID, "event_id", del.EventID, "event_type", del.EventType, "attempt", del.Attempts+1)
	if !ep.Enabled {
		log.Warn("webhook: not delivered: the endpoint is disabled")
		return d.store.RecordAttempt(ctx, del.ID, agentline.WebhookAttempt{At: time.Now(), Error: "not sent: the endpoint is disabled"}, agentline.DeliveryFailed)
	}
	a := d.send(ctx, del, ep)
	return d.settle(ctx, log, del, ep, a)
}

// settle stores the attempt and decides what follows it.
func (d *Deliverer) settle(ctx context.Context, log *slog.Logger, del agentline.WebhookDelivery, ep agentline.WebhookEndpoint, a agentline.WebhookAttempt) error {
	switch {
	case a.StatusCode >= 200 && a.StatusCode <= 299:
		d.attempts.WithLabelValues("delivered").Inc()
		log.Info("webhook delivered", "status", a.StatusCode, "latency_ms", a.LatencyMS)
		return d.store.RecordAttempt(ctx, del.ID, a, agentline.DeliveryDelivered)
	case a.StatusCode == http.StatusGone:
		d.attempts.WithLabelValues("gone").Inc()
		log.Warn("webhook endpoint answered 410 Gone: disabling it")
		if err := d.store.RecordAttempt(ctx, del.ID, a, agentline.DeliveryFailed); err != nil {
			return err
		}
		return d.store.DisableWebhook(ctx, ep.ID, "the endpoint answered 410 Gone")
	}
	reason := a.Error
	if reason == "" {
		reason = "answered " + strconv.Itoa(a.StatusCode)
	}
	wait := DelayAfter(del.Attempts+1, d.span)
	if next := time.Now().Add(wait); next.After(del.GiveUpAt) {
		d.attempts.WithLabelValues("failed").Inc()
		log.Error("webhook not delivered: giving up", "reason", reason, "attempts", del.Attempts+1)
		if err := d.store.RecordAttempt(ctx, del.ID, a, agentline.DeliveryFailed); err != nil {
			return err
		}
		if ep.FailingSince != nil && time.Since(*ep.FailingSince) >= d.span {
			log.Error("webhook endpoint failed for the whole retry span: disabling it")
			return d.store.DisableWebhook(ctx, ep.ID, fmt.Sprintf("deliveries failed for %s", d.span))
		}
		return nil
	}
	d.attempts.WithLabelValues("retry").Inc()
	log.Warn("webhook attempt failed, retrying", "reason", reason, "retry_in", wait.String())
	if err := d.store.RecordAttempt(ctx, del.ID, a, agentline.DeliveryPending); err != nil {
		return err
	}
	return river.JobSnooze(wait)
}

// send makes one signed request and reports how it went.
func (d *Deliverer) send(ctx context.Context, del agentline.WebhookDelivery, ep agentline.WebhookEndpoint) agentline.WebhookAttempt {
	start := time.Now()
	a := agentline.WebhookAttempt{At: start.UTC()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(del.Body))
	if err == nil {
		err = Sign(req.Header, ep.Secrets(start), del.EventID, start, del.Body)
	}
	if err != nil {
		a.Error = err.Error()
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentline-webhooks/1")
	resp, err := d.client.Do(req)
	a.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		// A refusal of the address policy says so, not as a network error.
		if a.Error = egress.Refusal(err); a.Error == "" {
			a.Error = err.Error()
		}
		return a
	}
	defer resp.Body.Close()
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, maxKept))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	a.StatusCode = resp.StatusCode
	a.Response = strings.ReplaceAll(strings.ToValidUTF8(string(kept), "\uFFFD"), "\x00", "")
	return a
}

// Sign sets the Standard Webhooks headers of one request: the event id,
// the attempt's time, and a v1 signature by each secret, space-separated.
func Sign(h http.Header, secrets []string, id string, at time.Time, body []byte) error {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			return fmt.Errorf("signing secret: %w", err)
		}
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return fmt.Errorf("sign: %w", err)
		}
		sigs = append(sigs, sig)
	}
	h.Set(standardwebhooks.HeaderWebhookID, id)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, strings.Join(sigs, " "))
	return nil
}

// orderWait is how long a delivery waits for the earlier pending event of
// its subject, after n snoozes of its job: 1 s, 2 s, 4 s ... up to 5 min
// (scaled down with a shorter retry span, at least 50 ms), with ±10 %
// jitter. The earlier one is being attempted, or waits for its next attempt
// (then this one may wait long: hence the back-off).
func (d *Deliverer) orderWait(n int) time.Duration {
	w := min(time.Second<<min(n, 9), 5*time.Minute)
	return jitter(max(time.Duration(float64(w)*float64(d.span)/float64(DefaultSpan)), 50*time.Millisecond))
}

// snoozes is how many times River snoozed the job (its metadata's
// "snoozes"); River does not count snoozes as attempts.
func snoozes(metadata []byte) int {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(metadata, &m) // no metadata: none
	return m.Snoozes
}
