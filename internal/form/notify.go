package form

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentline/agentline"
)

// DefaultBackoff is the wait before each retry of a notify_url delivery:
// six attempts over about three minutes, then the lead is logged as not
// delivered (it stays stored).
var DefaultBackoff = []time.Duration{time.Second, 3 * time.Second, 10 * time.Second, 30 * time.Second, 2 * time.Minute}

// notifyTimeout bounds one delivery attempt.
const notifyTimeout = 10 * time.Second

// queueSize is how many deliveries may wait; a submit never waits for one.
const queueSize = 1000

// NotifierOptions configures a Notifier.
type NotifierOptions struct {
	// Client sends the requests: the tool facility's SSRF-guarded client.
	Client *http.Client
	Logger *slog.Logger
	// Backoff is the wait before each retry; its length is the number of
	// retries. Nil means DefaultBackoff.
	Backoff []time.Duration
	// Workers is how many deliveries run at once; default 4.
	Workers int
}

// Notifier POSTs each lead to its form's notify_url in the background,
// retrying with backoff. Wait lets a draining instance finish the first
// attempts; Close stops it.
type Notifier struct {
	client  *http.Client
	logger  *slog.Logger
	backoff []time.Duration
	queue   chan delivery
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	closed  bool
	// firsts counts the deliveries queued whose first attempt has not
	// ended; idle is closed whenever it is 0.
	firsts int
	idle   chan struct{}
}

type delivery struct {
	url  string
	body []byte
	lead agentline.Lead
}

// Payload is the JSON body POSTed to notify_url.
type Payload struct {
	Event   string         `json:"event"` // lead.created
	Lead    agentline.Lead `json:"lead"`
	Channel struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"channel"`
}

// NewNotifier starts a notifier's workers.
func NewNotifier(o NotifierOptions) *Notifier {
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Notifier{client: o.Client, logger: o.Logger, backoff: o.Backoff, queue: make(chan delivery, queueSize), ctx: ctx, cancel: cancel,
		idle: make(chan struct{})}
	close(n.idle)
	for range o.Workers {
		n.wg.Go(n.work)
	}
	return n
}

// Send queues the lead for delivery to the channel's notify_url and
// returns at once. A full queue or a closed notifier is logged, never
// waited on: the lead is stored either way.
func (n *Notifier) Send(ch agentline.Channel, lead agentline.Lead) {
	if ch.Settings.Form == nil || ch.Settings.Form.NotifyURL == "" {
		return
	}
	p := Payload{Event: "lead.created", Lead: lead}
	p.Channel.ID, p.Channel.Name = ch.ID, ch.Name
	body, err := json.Marshal(p)
	if err != nil {
		n.logger.Error("notify: encode lead", "lead_id", lead.ID, "err", err)
		return
	}
	d := delivery{url: ch.Settings.Form.NotifyURL, body: body, lead: lead}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		n.logger.Error("notify: lead not delivered", "lead_id", lead.ID, "channel_id", ch.ID, "reason", "shutting down")
		return
	}
	select {
	case n.queue <- d:
		if n.firsts == 0 {
			n.idle = make(chan struct{})
		}
		n.firsts++
	default:
		n.logger.Error("notify: lead not delivered", "lead_id", lead.ID, "channel_id", ch.ID, "reason", "delivery queue full")
	}
}

// Close stops delivering: retries still waiting are given up (and logged),
// an attempt in flight is cancelled, and Close returns when every worker
// has stopped.
func (n *Notifier) Close() error {
	n.mu.Lock()
	if !n.closed {
		n.closed = true
		close(n.queue)
	}
	n.mu.Unlock()
	n.cancel()
	n.wg.Wait()
	return nil
}

// Wait returns when no delivery queued so far waits for its first attempt,
// or with ctx's error when ctx ends first. A draining instance calls it, so
// that a restart does not drop the leads that just came in; retries are not
// waited for.
func (n *Notifier) Wait(ctx context.Context) error {
	n.mu.Lock()
	idle := n.idle
	n.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		select { // idle too, with a drain timeout of 0: nothing was given up
		case <-idle:
			return nil
		default:
			return ctx.Err()
		}
	}
}

// firstDone counts a delivery's first attempt as ended.
func (n *Notifier) firstDone() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.firsts--; n.firsts == 0 {
		close(n.idle)
	}
}

func (n *Notifier) work() {
	for d := range n.queue {
		n.deliver(d)
	}
}

// deliver makes the attempts of one delivery.
func (n *Notifier) deliver(d delivery) {
	log := n.logger.With("lead_id", d.lead.ID, "channel_id", d.lead.ChannelID, "project_id", d.lead.ProjectID)
	for attempt := 1; ; attempt++ {
		err := n.attempt(d, attempt)
		if attempt == 1 {
			n.firstDone()
		}
		if err == nil {
			log.Info("notify: lead delivered", "attempt", attempt)
			return
		}
		if attempt > len(n.backoff) || n.ctx.Err() != nil {
			reason := err.Error()
			if n.ctx.Err() != nil {
				reason = "shutting down: " + reason
			}
			log.Error("notify: lead not delivered", "attempts", attempt, "reason", reason)
			return
		}
		wait := n.backoff[attempt-1]
		log.Warn("notify: attempt failed, retrying", "attempt", attempt, "retry_in", wait, "reason", err.Error())
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-n.ctx.Done():
			t.Stop()
			log.Error("notify: lead not delivered", "attempts", attempt, "reason", "shutting down before retry: "+err.Error())
			return
		}
	}
}

// attempt POSTs once; any 2xx answer is a delivery.
func (n *Notifier) attempt(d delivery, attempt int) error {
	ctx, cancel := context.WithTimeout(n.ctx, notifyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(d.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentline-notify/1")
	req.Header.Set("X-Agentline-Event", "lead.created")
	// The same key on every attempt lets a receiver drop a repeat of a
	// delivery whose answer was lost.
	req.Header.Set("Idempotency-Key", "lead-"+strconv.FormatInt(d.lead.ID, 10))
	req.Header.Set("X-Agentline-Attempt", strconv.Itoa(attempt))
	resp, err := n.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}
