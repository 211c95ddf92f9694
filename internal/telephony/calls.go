package telephony

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/livecall"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// POST /api/agents/{agent_id}/telephony/outbound {to_number}
//
// Places one call from the agent's number. The call is recorded (under the
// project's cap on live calls) before the carrier is asked; its TwiML opens
// the same media stream as inbound calls, marked outbound so the agent
// speaks first, with a signed stream token and the record's stream_ref.
func (h *Handler) outboundCall(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	agentID, projectID, err := h.Auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in struct {
		ToNumber string `json:"to_number"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if !agentline.ValidE164(in.ToNumber) {
		return agentline.Invalid("to_number", "to_number must be in E.164 form, such as +14155550100")
	}
	if h.calls.Draining() {
		return errDraining
	}
	agent, err := h.Store.Agent(ctx, projectID, agentID)
	if err != nil {
		return err
	}
	if err := livecall.CheckAgent(agent); err != nil {
		return err
	}
	number, err := h.Store.AgentPhoneNumber(ctx, projectID, agentID)
	if errors.Is(err, agentline.ErrNotFound) {
		return agentline.Invalid("", "agent %d has no phone number to call from: provision one first", agentID)
	}
	if err != nil {
		return err
	}
	if number.Status != agentline.NumberActive {
		return agentline.Invalid("", "the agent's number %s is %s: make it active before calling out", number.PhoneNumber, number.Status)
	}
	if in.ToNumber == number.PhoneNumber {
		return agentline.Invalid("to_number", "to_number is the agent's own number")
	}
	cr, err := h.carrier()
	if err != nil {
		return err
	}
	host, err := h.botHost()
	if err != nil {
		return err
	}
	ref, err := newStreamRef()
	if err != nil {
		return err
	}
	token := streamtoken.Sign(h.Secret, agentID, ref, agentline.CallOutbound, h.Now().Add(streamtoken.TTL))
	twiml, err := carrier.StreamTwiML(host, agentID,
		carrier.StreamParam{Name: "direction", Value: agentline.CallOutbound}, carrier.StreamParam{Name: "stream_token", Value: token}, carrier.StreamParam{Name: "stream_ref", Value: ref})
	if err != nil {
		return err
	}
	call, err := h.Store.ReserveCall(ctx, agentline.Call{
		ProjectID: projectID, AgentID: agentID, NumberID: &number.ID, CallSID: agentline.PendingCallSID(ref),
		Direction: agentline.CallOutbound, From: number.PhoneNumber, To: in.ToNumber,
		Status: agentline.CallQueued, StreamRef: ref,
	}, h.MaxConcurrentCalls)
	if err != nil {
		return err
	}
	// Whatever happens to the request from here, the record must match
	// what the carrier did; the carrier client's timeout bounds each step.
	bg := context.WithoutCancel(ctx)
	log := httpx.Logger(ctx).With("project_id", projectID, "agent_id", agentID, "call_id", call.ID)
	// The stream may come before the carrier's answer to the request.
	h.calls.ExpectOutbound(ref)
	cc, err := cr.CreateCall(bg, carrier.CallRequest{
		To: in.ToNumber, From: number.PhoneNumber, TwiML: twiml,
		StatusCallbackURL: "https://" + host + "/api/telephony/status",
	})
	if err != nil {
		h.calls.Settle(ref)
		if derr := h.Store.DeleteCall(bg, projectID, call.ID); derr != nil {
			log.Error("could not remove the record of a call the carrier refused", "err", derr)
		}
		return err
	}
	call, err = h.Store.AttachCallSID(bg, projectID, call.ID, cc.SID, cc.Status)
	if err != nil {
		if _, herr := cr.HangUp(bg, cc.SID); herr != nil {
			log.Error("placed a call, could not record it, and could not hang it up", "call_sid", cc.SID, "err", herr)
		}
		return err
	}
	log.Info("placed an outbound call", "call_sid", cc.SID, "status", cc.Status)
	httpx.WriteJSON(w, http.StatusCreated, struct {
		CallSID string `json:"call_sid"`
		Status  string `json:"status"`
	}{call.CallSID, call.Status})
	return nil
}

// errDraining answers requests that would start a call on a draining
// instance.
var errDraining = &agentline.Error{Code: agentline.EUnavailable, RetryAfter: 1,
	Message: "this instance is shutting down and takes no new calls; retry, and another instance will take it"}

func newStreamRef() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "sr_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// DELETE /api/agents/{agent_id}/telephony/calls/{call_sid}
//
// Hangs up a call of the agent, inbound or outbound, that has not ended.
func (h *Handler) endCall(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	agentID, projectID, err := h.Auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermDelete)
	if err != nil {
		return err
	}
	sid := r.PathValue("call_sid")
	if !carrier.ValidCallSID(sid) {
		return agentline.NotFound("call")
	}
	call, err := h.Store.Call(ctx, projectID, sid)
	if err != nil {
		return err
	}
	if call.AgentID != agentID {
		return agentline.NotFound("call")
	}
	if agentline.CallStatusFinal(call.Status) {
		return agentline.Errorf(agentline.EConflict, "call %s has already ended (status %s)", sid, call.Status)
	}
	cr, err := h.carrier()
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx) // a hang-up that happened must be recorded
	status, err := cr.HangUp(ctx, sid)
	if errors.Is(err, carrier.ErrCallGone) {
		// Our record missed the end (a lost status callback): close it.
		if _, err := h.Store.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: agentline.CallCompleted, EndReason: "unknown to the carrier"}); err != nil {
			return err
		}
		return agentline.Errorf(agentline.EConflict, "call %s has already ended: the carrier no longer knows it", sid)
	}
	if err != nil {
		return err
	}
	if _, err := h.Store.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: status, EndReason: livecall.EndedByAPI}); err != nil {
		return err
	}
	// The carrier ends the stream too; if this instance relays the call, it
	// stops at once rather than when the carrier gets to it.
	h.calls.EndByAPI(sid)
	httpx.Logger(ctx).Info("hung up a call", "project_id", projectID, "agent_id", agentID, "call_sid", sid, "status", status)
	httpx.NoContent(w)
	return nil
}

// callPage is a page of calls; NextBefore is the cursor of the next page,
// null on the last.
type callPage struct {
	Items      []agentline.Call `json:"items"`
	NextBefore *int64           `json:"next_before"`
}

// GET /api/projects/{project_id}/telephony/calls?agent_id=&status=&limit=&before=
func (h *Handler) listCalls(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.Auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := agentline.CallFilter{Limit: 50, Status: q.Get("status")}
	if f.Status != "" && !agentline.ValidCallStatus(f.Status) {
		return agentline.Invalid("status", "status %q is not a call status: use queued, initiated, ringing, in-progress, completed, busy, failed, no-answer or canceled", f.Status)
	}
	positive := func(name string, max int64) (int64, error) {
		s := q.Get(name)
		if s == "" {
			return 0, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n > max {
			return 0, agentline.Invalid(name, "%s must be a whole number from 1 to %d", name, max)
		}
		return n, nil
	}
	if f.AgentID, err = positive("agent_id", 1<<62); err != nil {
		return err
	}
	if f.Before, err = positive("before", 1<<62); err != nil {
		return err
	}
	limit, err := positive("limit", 200)
	if err != nil {
		return err
	}
	if limit > 0 {
		f.Limit = int(limit)
	}
	items, err := h.Store.Calls(r.Context(), projectID, f)
	if err != nil {
		return err
	}
	page := callPage{Items: items}
	if len(items) == f.Limit {
		page.NextBefore = &items[len(items)-1].ID
	}
	httpx.WriteJSON(w, http.StatusOK, page)
	return nil
}

// GET /api/calls/{call_sid}
func (h *Handler) getCall(w http.ResponseWriter, r *http.Request) error {
	sid := r.PathValue("call_sid")
	if !carrier.ValidCallSID(sid) {
		return agentline.NotFound("call")
	}
	ctx := r.Context()
	projectID, err := h.Store.ProjectOfCall(ctx, sid)
	if err != nil {
		return err
	}
	if err := h.Auth.AuthorizeIn(ctx, "call", projectID, agentline.PermView); err != nil {
		return err
	}
	call, err := h.Store.Call(ctx, projectID, sid)
	if err != nil {
		return err
	}
	events, err := h.Store.CallLog(ctx, projectID, call.ID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, callWithLog{call, events})
	return nil
}

// callWithLog is a call with what was said and done on it.
type callWithLog struct {
	agentline.Call
	Events []agentline.CallLogEntry `json:"events"`
}

// POST /api/telephony/status: the carrier's call status callback (form
// encoded, signature-checked in production by Signatures.Check). Any
// well-formed callback is acknowledged with 204, including one about a call
// we do not know, so the carrier does not log errors for it.
func (h *Handler) statusCallback(w http.ResponseWriter, r *http.Request) error {
	f := r.PostForm
	e := agentline.CallEvent{CallSID: f.Get("CallSid"), Status: f.Get("CallStatus"), From: f.Get("From"), To: f.Get("To")}
	if !carrier.ValidCallSID(e.CallSID) {
		return agentline.Invalid("CallSid", "CallSid is missing or malformed")
	}
	if !agentline.ValidCallStatus(e.Status) {
		return agentline.Invalid("CallStatus", "CallStatus %q is not a call status", e.Status)
	}
	switch f.Get("Direction") {
	case "inbound":
		e.Direction = agentline.CallInbound
	default: // outbound-api, outbound-dial
		e.Direction = agentline.CallOutbound
	}
	if t, err := time.Parse(time.RFC1123Z, f.Get("Timestamp")); err == nil {
		e.At = t
	}
	if d := f.Get("CallDuration"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return agentline.Invalid("CallDuration", "CallDuration must be a whole number of seconds")
		}
		e.DurationS = &n
	}
	log := httpx.Logger(r.Context()).With("call_sid", e.CallSID, "status", e.Status, "sequence", f.Get("SequenceNumber"))
	call, err := h.Store.ApplyCallEvent(r.Context(), e)
	switch {
	case errors.Is(err, agentline.ErrNotFound):
		log.Info("status callback for a call we do not know", "to", e.To)
	case err != nil:
		return err
	default:
		log.Debug("call status", "project_id", call.ProjectID, "agent_id", call.AgentID, "recorded_status", call.Status)
	}
	httpx.NoContent(w)
	return nil
}
