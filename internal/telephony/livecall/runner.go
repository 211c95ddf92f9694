package livecall

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/twilio/twilio-go/twiml"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/recording"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// EndedByAPI is the end reason of a call hung up through the API; call
// management records it too.
const EndedByAPI = "api_hangup"

// Reasons a call ends that the relay does not know itself.
var (
	errMaxDuration = errors.New("max_duration")
	errEndedByAPI  = errors.New(EndedByAPI)
	errShutdown    = errors.New("shutdown")
)

// runCall opens the model's socket and relays the call until it ends, then
// records how it ended and what was said.
func (h *Handler) runCall(ctx context.Context, conn *relay.Socket, sc *streamCall, log *slog.Logger) {
	sid := sc.start.CallSID
	log.Info("call stream started", "direction", sc.claims.Direction)
	defs, err := h.toolDefinitions(ctx, sc.agent, sc.call)
	if err != nil {
		log.Error("tool definitions", "err", err)
	}
	entries := h.startCallLog(sc, log)
	ctx, endSpan := h.startCallSpan(ctx, sc)
	rec := func(res relay.Result, reason string, ended time.Time) {
		endSpan(res, reason)
		h.finishCall(sc, res, reason, ended, entries, log)
	}
	// A model the call cannot reach (no key, a refused socket) is told to
	// the caller and recorded alike.
	side, err := h.modelFor(ctx, sc, defs)
	var model *relay.Socket
	if err == nil {
		model, err = dialModel(ctx, side)
	}
	if err != nil {
		log.Error("could not open the model's socket", "err", err)
		res := relay.Result{Reason: relay.EndModelDisconnect, Err: err}
		h.apologize(sc, res, log)
		relay.CloseEnded(conn, res.Reason)
		rec(res, string(res.Reason), h.now())
		return
	}

	tools := &callTools{h: h, agent: sc.agent, call: sc.call, transfer: &atomic.Bool{}, optedOut: &atomic.Bool{}, log: log}
	transferred := false
	opts := relay.Options{
		StreamSID: sc.start.StreamSID,
		Tools:     tools,
		OnEvent: func(e relay.Event) {
			if e.Type == agentline.EventTurnLatency {
				h.metrics.turnLatency.Observe(e.Latency.Seconds())
			}
			entries.add(e)
		},
		Logger:       log,
		FrameLatency: h.metrics.frameLatency,
		ReadyTimeout: h.modelReadyTimeout,
		Tracer:       h.tracer,
		BeforeCarrierClose: func(res relay.Result) {
			if tools.transfer.Load() && res.Reason == relay.EndAgentHangup {
				transferred = h.transfer(sc, log)
				return
			}
			h.apologize(sc, res, log)
		},
	}
	side.opts(&opts)
	recorder := h.beginRecording(sc, &opts, log)
	rc := relay.New(conn, model, opts)
	tools.relay = rc
	if !h.live.add(sid, rc) {
		log.Warn("a stream for this call is already relayed")
		endSpan(relay.Result{}, "stream_refused")
		discardRecording(recorder)
		entries.stop()
		relay.CloseSocket(model, websocket.StatusNormalClosure, "stream refused")
		relay.CloseSocket(conn, websocket.StatusPolicyViolation, "stream refused")
		return
	}
	h.metrics.active.Inc()
	timer := time.AfterFunc(h.maxCallDuration, func() { rc.End(errMaxDuration) })
	res := rc.Run(ctx)
	ended := h.now()
	recorder.End(ended) // the recording lasts as long as the call; nil records nothing
	timer.Stop()
	h.metrics.active.Dec()
	rec(res, h.callEndReason(sc, res, transferred, tools.optedOut.Load(), log), ended)
	h.live.remove(sid) // after the end record, which a status callback may wait for (AwaitRecorded)
	h.finishRecording(sc, recorder, log)
}

// beginRecording starts the call's recorder when its agent records calls,
// and hands it to the relay's opts; a recorder that cannot start (no disk)
// costs the recording, not the call.
func (h *Handler) beginRecording(sc *streamCall, opts *relay.Options, log *slog.Logger) *recording.Recorder {
	if !sc.agent.RecordCalls || h.recordings == nil {
		return nil
	}
	r, err := h.recordings.Begin(sc.started)
	if err != nil {
		log.Error("could not start recording the call; it goes on unrecorded", "err", err)
		return nil
	}
	opts.Recorder = r // never a typed nil: the relay checks for nil
	return r
}

// finishRecording stores the call's recording once the call has ended
// (off the call's path: both sockets are closed by then). A drain waits
// for it, since it runs in the stream's handler.
func (h *Handler) finishRecording(sc *streamCall, r *recording.Recorder, log *slog.Logger) {
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.recordings.Finish(ctx, sc.call.ProjectID, sc.call.ID, r); err != nil {
		log.Error("could not keep the call's recording", "err", err)
	}
}

// discardRecording drops the recording of a call that was not relayed.
func discardRecording(r *recording.Recorder) {
	if r == nil {
		return
	}
	if res, err := r.Close(context.Background()); err == nil {
		res.Remove()
	}
}

// carrierOf is the carrier that carries the call: none for a test call
// from the browser (no carrier takes part), else the account's, which is
// nil when none is configured.
func (h *Handler) carrierOf(sc *streamCall) carrier.Carrier {
	if sc.claims.Direction == agentline.CallTest {
		return nil
	}
	return h.carrierAPI
}

// carrierLost asks the carrier about a call whose media stream closed
// without a stop message: a call the carrier has ended was the caller's
// hang-up; one still live (a network break between us and the carrier) is
// ended through the REST API, so that no call is left billing with nobody on
// our side.
func (h *Handler) carrierLost(sc *streamCall, log *slog.Logger) string {
	const lost = string(relay.EndCarrierDisconnect)
	c := h.carrierOf(sc)
	if c == nil {
		return lost
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	status, err := c.CallStatus(ctx, sc.start.CallSID)
	switch {
	case errors.Is(err, carrier.ErrCallGone) || err == nil && agentline.CallStatusFinal(status):
		return string(relay.EndCallerHangup)
	case err != nil:
		log.Error("the media stream closed without stop and the carrier could not be asked about the call", "err", err)
		return lost
	}
	log.Warn("the media stream closed without stop while the call is live at the carrier; hanging it up", "carrier_status", status)
	if _, err := c.HangUp(ctx, sc.start.CallSID); err != nil && !errors.Is(err, carrier.ErrCallGone) {
		log.Error("could not hang up the call whose media stream was lost", "err", err)
	}
	return lost
}

// transfer redirects the live call to the agent's transfer number, calling
// from our number, and reports whether the carrier took it.
func (h *Handler) transfer(sc *streamCall, log *slog.Logger) bool {
	c := h.carrierOf(sc)
	switch {
	case c == nil && sc.claims.Direction == agentline.CallTest:
		log.Info("a test call is not transferred: no carrier takes part", "to", sc.agent.TransferNumber)
		return false
	case c == nil:
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
	if err := c.Redirect(ctx, sc.start.CallSID, doc); err != nil {
		log.Error("could not transfer the call", "to", sc.agent.TransferNumber, "err", err)
		return false
	}
	log.Info("transferred the call", "to", sc.agent.TransferNumber)
	return true
}

// callEndReason is the reason recorded on a relayed call: the relay's,
// unless the call went on to the transfer number, or its media stream was
// lost (carrierLost asks the carrier what became of it), or the person
// opted out before it ended as calls do (hung up by the agent after its
// goodbye, or by the person): opted_out tells a campaign's records why.
func (h *Handler) callEndReason(sc *streamCall, res relay.Result, transferred, optedOut bool, log *slog.Logger) string {
	reason := endReason(res)
	switch {
	case transferred:
		return agentline.EndReasonTransferred
	case res.Reason == relay.EndCarrierDisconnect:
		reason = h.carrierLost(sc, log)
	}
	if optedOut && (reason == string(relay.EndAgentHangup) || reason == string(relay.EndCallerHangup)) {
		return reasonOptedOut
	}
	return reason
}

// endReason is the reason the relay's end gives the call.
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
	c := h.carrierOf(sc)
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Redirect(ctx, sc.start.CallSID, sayAndHangUp(apology)); err != nil && !errors.Is(err, carrier.ErrCallGone) {
		log.Error("could not play the apology", "err", err)
	}
}

// finishCall records the call's end (at ended, when the relay returned),
// its duration and its log.
func (h *Handler) finishCall(sc *streamCall, res relay.Result, reason string, ended time.Time, l *callLog, log *slog.Logger) {
	entries, spoke := l.stop()
	// Many calls can end at once (a shutdown), and their records queue for
	// the database: give them time.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := ended.Sub(sc.started)
	secs := int(d.Round(time.Second) / time.Second)
	h.metrics.duration.Observe(d.Seconds())
	end := agentline.CallEvent{CallSID: sc.start.CallSID, Status: agentline.CallCompleted, At: ended, DurationS: &secs, EndReason: reason, Log: entries}
	if reason == agentline.EndReasonTransferred {
		// The call goes on with the person dialed; the carrier's status
		// callback will say when it ends, and how long it lasted.
		end.Status, end.DurationS = agentline.CallInProgress, nil
	}
	if _, err := h.store.ApplyCallEvent(ctx, end, conversation.RelayEnded(spoke)); err != nil {
		log.Error("could not record the call's end and transcript", "err", err, "events", len(entries))
	}
	log.Info("call ended", "reason", reason, "duration", d, "caller_frames", res.CallerFrames, "agent_frames", res.AgentFrames, "err", res.Err)
}
