package telephony

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/twilio/twilio-go/twiml"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// Tools runs agents' tool calls (the tool facility).
type Tools interface {
	Definitions(ctx context.Context, agent agentline.Agent) ([]agentline.ToolDefinition, error)
	Execute(ctx context.Context, agent agentline.Agent, call agentline.ToolCall) (agentline.ToolResult, error)
}

// Reasons a call ends that the relay does not know itself.
var (
	errMaxDuration = errors.New("max_duration")
	errEndedByAPI  = errors.New("api_hangup")
	errShutdown    = errors.New("shutdown")
)

// startTimeout bounds the wait for the carrier's connected and start
// messages after the upgrade.
const startTimeout = 10 * time.Second

// streamStart is what the carrier's start message says about the stream.
type streamStart struct {
	StreamSID        string            `json:"streamSid"`
	CallSID          string            `json:"callSid"`
	CustomParameters map[string]string `json:"customParameters"`
}

// GET /api/telephony/stream/{agent_id}: the carrier's media stream of one
// call (a WebSocket). The start message must carry a stream token for this
// agent and call, or the socket is closed before the model is reached; then
// the call is relayed to the agent's realtime model until either side ends.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request) error {
	agentID, err := httpx.PathID(r, "agent_id")
	if err != nil {
		return err
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return agentline.Invalid("", "this is the carrier's media stream: it must be opened as a WebSocket")
	}
	if err := h.Signatures.CheckUpgrade(r); err != nil {
		return err
	}
	carrier, err := websocket.Accept(w, r, nil)
	if err != nil {
		return nil // Accept has answered the client
	}
	carrier.SetReadLimit(1 << 16)
	ctx := context.WithoutCancel(r.Context())
	log := httpx.Logger(ctx).With("agent_id", agentID)
	if !h.live.enter() {
		carrier.Close(websocket.StatusTryAgainLater, "shutting down")
		return nil
	}
	defer h.live.leave()
	sc, err := h.admit(ctx, carrier, agentID)
	if err != nil {
		log.Warn("media stream refused", "err", err)
		carrier.Close(websocket.StatusPolicyViolation, "stream refused")
		return nil
	}
	h.runCall(ctx, carrier, sc, log.With("project_id", sc.call.ProjectID, "call_sid", sc.start.CallSID, "call_id", sc.call.ID))
	return nil
}

// streamCall is an admitted stream: its start message, call record and agent.
type streamCall struct {
	start   streamStart
	claims  Claims
	call    agentline.Call
	agent   agentline.Agent
	started time.Time
}

// admit reads the carrier's connected and start messages and checks the
// stream token against the agent and the call's record.
func (h *Handler) admit(ctx context.Context, carrier *websocket.Conn, agentID int64) (*streamCall, error) {
	rctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var start streamStart
	for {
		_, msg, err := carrier.Read(rctx)
		if err != nil {
			return nil, fmt.Errorf("read start: %w", err)
		}
		var m struct {
			Event string      `json:"event"`
			Start streamStart `json:"start"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			return nil, fmt.Errorf("carrier message: %w", err)
		}
		if m.Event == "connected" {
			continue
		}
		if m.Event != "start" {
			return nil, fmt.Errorf("%q before start", m.Event)
		}
		start = m.Start
		break
	}
	if start.StreamSID == "" || !validCallSID(start.CallSID) {
		return nil, errors.New("start without streamSid or a valid callSid")
	}
	claims, err := Verify(h.Secret, start.CustomParameters["stream_token"], agentID, h.Now())
	if err != nil {
		return nil, err
	}
	h.live.settle(claims.Ref)
	projectID, err := h.Store.ProjectOf(ctx, agentline.KindAgent, agentID)
	if err != nil {
		return nil, err
	}
	var call agentline.Call
	switch claims.Direction {
	case agentline.CallInbound:
		if claims.Ref != start.CallSID {
			return nil, errors.New("stream token issued for another call")
		}
		call, err = h.Store.Call(ctx, projectID, start.CallSID)
	case agentline.CallOutbound:
		if start.CustomParameters["stream_ref"] != claims.Ref {
			return nil, errors.New("stream_ref does not match the stream token")
		}
		call, err = h.Store.CallByStreamRef(ctx, projectID, claims.Ref)
		if err == nil && call.CallSID != start.CallSID {
			if call.CallSID != agentline.PendingCallSID(claims.Ref) {
				return nil, errors.New("stream token issued for another call")
			}
			// The stream came before the carrier's answer to the call request.
			call, err = h.Store.AttachCallSID(ctx, projectID, call.ID, start.CallSID, call.Status)
		}
	default:
		return nil, errors.New("stream token without a direction")
	}
	if err != nil {
		return nil, fmt.Errorf("call record: %w", err)
	}
	if call.AgentID != agentID {
		return nil, errors.New("the call belongs to another agent")
	}
	if agentline.CallStatusFinal(call.Status) || call.EndReason != "" {
		// A call whose relay has ended (a transferred call stays in
		// progress) takes no second stream on the same token.
		return nil, fmt.Errorf("the call has ended (%s %s)", call.Status, call.EndReason)
	}
	agent, err := h.Store.Agent(ctx, projectID, agentID)
	if err != nil {
		return nil, err
	}
	if err := callAgent(agent); err != nil {
		return nil, err
	}
	// A streaming call is answered, whatever status callbacks are still on
	// their way.
	if call, err = h.Store.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: call.CallSID, Status: agentline.CallInProgress}); err != nil {
		return nil, err
	}
	return &streamCall{start: start, claims: claims, call: call, agent: agent, started: h.Now()}, nil
}

// runCall opens the model's socket and relays the call until it ends, then
// records how it ended and what was said.
func (h *Handler) runCall(ctx context.Context, carrier *websocket.Conn, sc *streamCall, log *slog.Logger) {
	sid := sc.start.CallSID
	log.Info("call stream started", "direction", sc.claims.Direction)
	defs, err := h.toolDefinitions(ctx, sc.agent)
	if err != nil {
		log.Error("tool definitions", "err", err)
	}
	update, err := h.sessionUpdate(sc.agent, defs)
	if err != nil {
		log.Error("session.update", "err", err)
		carrier.CloseNow()
		return
	}
	entries := h.startCallLog(sc, log)
	rec := func(res relay.Result, reason string) {
		h.finishCall(sc, res, reason, entries.stop(), log)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	model, _, err := websocket.Dial(dctx, h.realtimeURL(sc.agent.Model), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + h.OpenAIAPIKey}},
	})
	cancel()
	if err != nil {
		log.Error("could not open the model's socket", "err", err)
		res := relay.Result{Reason: relay.EndModelDisconnect, Err: err}
		h.apologize(sc, res, log)
		carrier.CloseNow()
		rec(res, string(res.Reason))
		return
	}
	model.SetReadLimit(1 << 22)

	tools := &callTools{h: h, agent: sc.agent, transfer: &atomic.Bool{}}
	transferred := false
	rc := relay.New(carrier, model, relay.Options{
		StreamSID:     sc.start.StreamSID,
		SessionUpdate: update,
		SpeakFirst:    speakFirst(sc.agent, sc.claims.Direction),
		Tools:         tools,
		OnEvent:       entries.add,
		Logger:        log,
		FrameLatency:  h.metrics.frameLatency,
		ReadyTimeout:  h.ModelReadyTimeout,
		BeforeCarrierClose: func(res relay.Result) {
			if tools.transfer.Load() && res.Reason == relay.EndAgentHangup {
				transferred = h.transfer(sc, log)
				return
			}
			h.apologize(sc, res, log)
		},
	})
	tools.relay = rc
	if !h.live.add(sid, rc) {
		log.Warn("a stream for this call is already relayed")
		entries.stop()
		model.CloseNow()
		carrier.Close(websocket.StatusPolicyViolation, "stream refused")
		return
	}
	h.metrics.active.Inc()
	timer := time.AfterFunc(h.MaxCallDuration, func() { rc.End(errMaxDuration) })
	res := rc.Run(ctx)
	timer.Stop()
	h.live.remove(sid)
	h.metrics.active.Dec()
	reason := endReason(res)
	if transferred {
		reason = reasonTransferred
	}
	if res.Reason == relay.EndCarrierDisconnect {
		reason = h.carrierLost(sc, log)
	}
	rec(res, reason)
}

// carrierLost asks the carrier about a call whose media stream closed
// without a stop message: a call the carrier has ended was the caller's
// hang-up; one still live (a network break between us and the carrier) is
// ended through the REST API, so that no call is left billing with nobody on
// our side.
func (h *Handler) carrierLost(sc *streamCall, log *slog.Logger) string {
	const lost = string(relay.EndCarrierDisconnect)
	if h.Carrier == nil {
		return lost
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, err := h.Carrier.CallStatus(ctx, sc.start.CallSID)
	switch {
	case errors.Is(err, ErrCallGone) || err == nil && agentline.CallStatusFinal(status):
		return string(relay.EndCallerHangup)
	case err != nil:
		log.Error("the media stream closed without stop and the carrier could not be asked about the call", "err", err)
		return lost
	}
	log.Warn("the media stream closed without stop while the call is live at the carrier; hanging it up", "carrier_status", status)
	if _, err := h.Carrier.HangUp(ctx, sc.start.CallSID); err != nil && !errors.Is(err, ErrCallGone) {
		log.Error("could not hang up the call whose media stream was lost", "err", err)
	}
	return lost
}

// reasonTransferred is the end reason of a relay whose call went on to the
// agent's transfer number.
const reasonTransferred = "transferred"

// transfer redirects the live call to the agent's transfer number, calling
// from our number, and reports whether the carrier took it.
func (h *Handler) transfer(sc *streamCall, log *slog.Logger) bool {
	if h.Carrier == nil {
		log.Error("cannot transfer the call: no carrier account is configured")
		return false
	}
	ours := sc.call.To
	if sc.call.Direction == agentline.CallOutbound {
		ours = sc.call.From
	}
	doc, err := twiml.Voice([]twiml.Element{twiml.VoiceDial{Number: sc.agent.TransferNumber, CallerId: ours}})
	if err != nil {
		log.Error("transfer TwiML", "err", err)
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Carrier.Redirect(ctx, sc.start.CallSID, doc); err != nil {
		log.Error("could not transfer the call", "to", sc.agent.TransferNumber, "err", err)
		return false
	}
	log.Info("transferred the call", "to", sc.agent.TransferNumber)
	return true
}

// endReason is the reason recorded on the call.
func endReason(res relay.Result) string {
	for _, e := range []error{errMaxDuration, errEndedByAPI, errShutdown} {
		if res.Reason == relay.EndCanceled && errors.Is(res.Err, e) {
			return e.Error()
		}
	}
	return string(res.Reason)
}

// apologize redirects a call whose model failed to a short apology and a
// hang-up, instead of leaving the caller in silence.
func (h *Handler) apologize(sc *streamCall, res relay.Result, log *slog.Logger) {
	if res.Reason != relay.EndModelDisconnect && res.Reason != relay.EndModelNotReady {
		return
	}
	log.Warn("the model failed mid-call; apologizing and hanging up", "reason", res.Reason, "err", res.Err)
	if h.Carrier == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Carrier.Redirect(ctx, sc.start.CallSID, sayAndHangUp(apology)); err != nil && !errors.Is(err, ErrCallGone) {
		log.Error("could not play the apology", "err", err)
	}
}

// finishCall records the call's end, its duration and its log.
func (h *Handler) finishCall(sc *streamCall, res relay.Result, reason string, entries []agentline.CallLogEntry, log *slog.Logger) {
	// Many calls can end at once (a shutdown), and their records queue for
	// the database: give them time.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := h.Now().Sub(sc.started)
	secs := int(d.Round(time.Second) / time.Second)
	h.metrics.duration.Observe(d.Seconds())
	end := agentline.CallEvent{CallSID: sc.start.CallSID, Status: agentline.CallCompleted, DurationS: &secs, EndReason: reason, Log: entries}
	if reason == reasonTransferred {
		// The call goes on with the person dialed; the carrier's status
		// callback will say when it ends, and how long it lasted.
		end.Status, end.DurationS = agentline.CallInProgress, nil
	}
	if _, err := h.Store.ApplyCallEvent(ctx, end); err != nil {
		log.Error("could not record the call's end and transcript", "err", err, "events", len(entries))
	}
	log.Info("call ended", "reason", reason, "duration", d, "caller_frames", res.CallerFrames, "agent_frames", res.AgentFrames, "err", res.Err)
}

// realtimeURL is the realtime WebSocket URL of model at OPENAI_BASE_URL.
func (h *Handler) realtimeURL(model string) string {
	base := strings.TrimSuffix(h.OpenAIBaseURL, "/")
	switch {
	case strings.HasPrefix(base, "https://"):
		base = "wss://" + strings.TrimPrefix(base, "https://")
	case strings.HasPrefix(base, "http://"):
		base = "ws://" + strings.TrimPrefix(base, "http://")
	}
	return base + "/v1/realtime?model=" + url.QueryEscape(model)
}

// callLog writes a call's events to its record while the call goes on, so
// an instance that dies mid-call keeps what was said until then. The relay
// hands events to add from its goroutines, which never wait on the
// database: add appends to a pending batch (bounded by maxCallLog) and
// wakes the call's own writer goroutine, which stores whatever is pending
// in one transaction per wake.
type callLog struct {
	write func(context.Context, []agentline.CallLogEntry) error
	log   *slog.Logger

	mu      sync.Mutex
	pending []agentline.CallLogEntry
	kept    int           // entries accepted, written or not
	wake    chan struct{} // capacity 1: a wake-up is pending
	stopped chan struct{}
	done    chan struct{}
}

// maxCallLog bounds the entries kept of one call.
const maxCallLog = 10000

// startCallLog starts the writer of one call's log.
func (h *Handler) startCallLog(sc *streamCall, log *slog.Logger) *callLog {
	l := &callLog{
		write: func(ctx context.Context, entries []agentline.CallLogEntry) error {
			return h.Store.AppendCallLog(ctx, sc.call.ProjectID, sc.call.ID, entries)
		},
		log: log, wake: make(chan struct{}, 1), stopped: make(chan struct{}), done: make(chan struct{}),
	}
	go l.run()
	return l
}

func (l *callLog) add(e relay.Event) {
	entry := agentline.CallLogEntry{Type: e.Type, Role: e.Role, Text: e.Text, At: e.At.UTC()}
	if e.Call != nil {
		data := struct {
			Name      string          `json:"name"`
			CallID    string          `json:"call_id"`
			Arguments json.RawMessage `json:"arguments"`
			Output    string          `json:"output,omitempty"`
			IsError   bool            `json:"is_error,omitempty"`
		}{Name: e.Call.Name, CallID: e.Call.CallID, Arguments: e.Call.Arguments}
		if e.Result != nil {
			data.Output, data.IsError = e.Result.Output, e.Result.IsError
		}
		entry.Data, _ = json.Marshal(data)
		entry.Text = e.Call.Name
	}
	l.mu.Lock()
	if l.kept < maxCallLog {
		l.kept++
		l.pending = append(l.pending, entry)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default: // the writer is already due to run
	}
}

// run stores pending entries on each wake-up until stop. A batch that could
// not be stored stays pending for the next try (and, last, for the call's
// end record).
func (l *callLog) run() {
	defer close(l.done)
	for {
		select {
		case <-l.wake:
		case <-l.stopped:
			return
		}
		batch := l.take()
		if len(batch) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := l.write(ctx, batch)
		cancel()
		if err != nil {
			l.log.Warn("could not store call events yet; keeping them for the next write", "err", err, "events", len(batch))
			l.mu.Lock()
			l.pending = append(batch, l.pending...)
			l.mu.Unlock()
		}
	}
}

func (l *callLog) take() []agentline.CallLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.pending
	l.pending = nil
	return out
}

// stop ends the writer and returns the entries not stored yet, which go
// with the call's end record in its transaction.
func (l *callLog) stop() []agentline.CallLogEntry {
	close(l.stopped)
	<-l.done
	return l.take()
}

// liveCalls are the calls relayed by this instance, by call SID, so an API
// hang-up and shutdown can end them: the HTTP server does not track hijacked
// connections.
type liveCalls struct {
	mu    sync.Mutex
	calls map[string]*relay.Call
	// draining: no new calls are taken; streams of calls already answered
	// still are. closing: no stream is taken at all.
	draining, closing bool
	running           int // stream handlers in flight
	handlers          sync.WaitGroup
	// pending are calls answered here whose stream has not come yet, by
	// stream token ref, with when to stop waiting for it: a drain waits
	// for them too, so that a call answered just before SIGTERM is kept.
	pending map[string]time.Time
}

// How long after its answer a call's stream is waited for by a drain: the
// carrier opens an inbound call's stream at once; an outbound one rings
// for up to 60 s first.
const (
	inboundStreamGrace  = 10 * time.Second
	outboundStreamGrace = 75 * time.Second
)

// expect records that the call with this stream token ref was answered and
// its stream should come before until.
func (l *liveCalls) expect(ref string, until, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[string]time.Time{}
	}
	for r, u := range l.pending { // streams that never came
		if !u.After(now) {
			delete(l.pending, r)
		}
	}
	l.pending[ref] = until
}

// settle stops waiting for the stream of ref: it came, or never will.
func (l *liveCalls) settle(ref string) {
	l.mu.Lock()
	delete(l.pending, ref)
	l.mu.Unlock()
}

// busy counts the streams running and the ones still awaited at now.
func (l *liveCalls) busy(now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.running
	for _, until := range l.pending {
		if until.After(now) {
			n++
		}
	}
	return n
}

// enter counts a stream handler in, unless shutdown has begun.
func (l *liveCalls) enter() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	l.running++
	l.handlers.Add(1)
	return true
}

func (l *liveCalls) leave() {
	l.mu.Lock()
	l.running--
	l.mu.Unlock()
	l.handlers.Done()
}

func (l *liveCalls) isDraining() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.draining
}

func (l *liveCalls) add(sid string, c *relay.Call) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing {
		return false
	}
	if l.calls == nil {
		l.calls = map[string]*relay.Call{}
	}
	if _, dup := l.calls[sid]; dup {
		return false
	}
	l.calls[sid] = c
	return true
}

func (l *liveCalls) remove(sid string) {
	l.mu.Lock()
	delete(l.calls, sid)
	l.mu.Unlock()
}

// end ends the call's relay here, if it runs here.
func (l *liveCalls) end(sid string, cause error) {
	l.mu.Lock()
	c := l.calls[sid]
	l.mu.Unlock()
	if c != nil {
		c.End(cause)
	}
}

// Drain makes this instance take no new calls: the inbound webhook answers
// with a busy signal (<Reject reason="busy"/>: not billed, and the caller's
// redial reaches an instance that is not draining) and outbound calls answer
// 503 unavailable. Calls already answered go on, streams included.
func (h *Handler) Drain() {
	h.live.mu.Lock()
	h.live.draining = true
	h.live.mu.Unlock()
}

// LiveCalls counts the media streams this instance is handling.
func (h *Handler) LiveCalls() int {
	h.live.mu.Lock()
	defer h.live.mu.Unlock()
	return h.live.running
}

// WaitCalls waits until no media stream runs here and none is awaited for
// a call answered here, or ctx ends.
func (h *Handler) WaitCalls(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for h.live.busy(h.Now()) > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d calls still live or awaited: %w", h.live.busy(h.Now()), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// errDraining answers requests that would start a call on a draining
// instance.
var errDraining = &agentline.Error{Code: agentline.EUnavailable, RetryAfter: 1,
	Message: "this instance is shutting down and takes no new calls; retry, and another instance will take it"}

// EndCalls ends every call this instance relays and waits, until ctx ends,
// for their records to be written. New streams are refused from now on.
// http.Server.Shutdown does not wait for hijacked connections, so the app
// calls this after it.
func (h *Handler) EndCalls(ctx context.Context) error {
	l := h.live
	l.mu.Lock()
	l.closing = true
	for _, c := range l.calls {
		c.End(errShutdown)
	}
	l.mu.Unlock()
	done := make(chan struct{})
	go func() { l.handlers.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("calls still ending: %w", ctx.Err())
	}
}
