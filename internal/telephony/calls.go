package telephony

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/livecall"
)

// DELETE /api/agents/{agent_id}/telephony/calls/{call_sid}
//
// Hangs up a call of the agent, inbound or outbound, that has not ended.
func (h *Handler) endCall(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermDelete)
	if err != nil {
		return err
	}
	if _, err := h.hangUpCall(r.Context(), projectID, agentID, r.PathValue("call_sid")); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}

// hangUpCall hangs up the call sid of an agent of the project, unless it
// has ended, records how it ended and returns its status at the carrier. A
// call of another agent, or none, is not found. Once the carrier is asked,
// the caller's context no longer cuts the work short: a hang-up that
// happened must be recorded. A call the carrier no longer knows ended
// without our record hearing of it (a lost status callback): its record is
// closed, and the answer is conflict.
func (h *Handler) hangUpCall(ctx context.Context, projectID, agentID int64, sid string) (string, error) {
	if !carrier.ValidCallSID(sid) {
		return "", agentline.NotFound("call")
	}
	call, err := h.store.Call(ctx, projectID, sid)
	if err != nil {
		return "", err
	}
	if call.AgentID != agentID {
		return "", agentline.NotFound("call")
	}
	if agentline.CallStatusFinal(call.Status) {
		return "", agentline.Errorf(agentline.EConflict, "call %s has already ended (status %s)", sid, call.Status)
	}
	cr, err := h.carrier()
	if err != nil {
		return "", err
	}
	ctx = context.WithoutCancel(ctx)
	status, err := cr.HangUp(ctx, sid)
	if errors.Is(err, carrier.ErrCallGone) {
		if _, err := h.store.ApplyCallEvent(ctx, goneAtCarrier(sid), conversation.CallChanged); err != nil {
			return "", err
		}
		return "", agentline.Errorf(agentline.EConflict, "call %s has already ended: the carrier no longer knows it", sid)
	}
	if err != nil {
		return "", err
	}
	if _, err := h.store.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: status, EndReason: livecall.EndedByAPI}, conversation.CallChanged); err != nil {
		return "", err
	}
	// The carrier ends the stream too; if this instance relays the call, it
	// stops at once rather than when the carrier gets to it.
	h.calls.EndByAPI(sid)
	if agentline.CallStatusFinal(status) && call.StreamRef != "" {
		// Hung up before it was answered: its stream never comes, and a
		// drain must not wait for it.
		h.calls.Settle(call.StreamRef)
	}
	httpx.Logger(ctx).Info("hung up a call", "project_id", projectID, "agent_id", agentID, "call_sid", sid, "status", status)
	return status, nil
}

// goneAtCarrier closes the record of a call the carrier no longer knows:
// whatever the record says, the call is over.
func goneAtCarrier(sid string) agentline.CallEvent {
	return agentline.CallEvent{CallSID: sid, Status: agentline.CallCompleted, EndReason: "unknown to the carrier"}
}

// callPage is a page of calls; NextCursor is the cursor of the next page,
// null on the last. NextBefore, the deprecated one, is the last call's id
// whenever the page is full, so it may lead to an empty last page.
type callPage struct {
	Items      []agentline.Call `json:"items"`
	NextCursor *string          `json:"next_cursor"`
	NextBefore *int64           `json:"next_before"`
}

// GET /api/projects/{project_id}/telephony/calls?agent_id=&status=&limit=&cursor= (or the deprecated before=)
func (h *Handler) listCalls(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
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
	after, err := listing.IntCursor(q)
	if err != nil {
		return err
	}
	if after > 0 {
		if f.Before > 0 {
			return agentline.Invalid("cursor", "pass cursor or the deprecated before, not both")
		}
		f.Before = after
	}
	limit, err := positive("limit", 200)
	if err != nil {
		return err
	}
	if limit > 0 {
		f.Limit = int(limit)
	}
	f.Limit++ // one more than asked tells whether there is a next page
	items, err := h.store.Calls(r.Context(), projectID, f)
	if err != nil {
		return err
	}
	f.Limit--
	page := callPage{}
	page.Items, page.NextCursor = listing.Next(items, f.Limit, func(c agentline.Call) listing.Cursor { return listing.After(c.ID) })
	if len(page.Items) == f.Limit {
		page.NextBefore = &page.Items[len(page.Items)-1].ID
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
	projectID, err := h.store.ProjectOfCall(ctx, sid)
	if err != nil {
		return err
	}
	if err := h.auth.AuthorizeIn(ctx, "call", projectID, agentline.PermView); err != nil {
		return err
	}
	call, err := h.store.Call(ctx, projectID, sid)
	if err != nil {
		return err
	}
	events, err := h.store.CallLog(ctx, projectID, call.ID)
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

// relayEndWait bounds how long a final status callback waits for the end
// record of the call's relay running here.
const relayEndWait = 2 * time.Second

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
	// The final callback's verdict settles the call's outcome when the
	// verdict's own callback is late. An earlier one is left to that
	// callback, which tells the AnsweringMachine while the call is live;
	// a value unknown to us is left out, not refused.
	if by := f.Get("AnsweredBy"); agentline.CallStatusFinal(e.Status) && agentline.ValidAnsweredBy(by) {
		e.AnsweredBy = by
	}
	if d := f.Get("CallDuration"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return agentline.Invalid("CallDuration", "CallDuration must be a whole number of seconds")
		}
		e.DurationS = &n
	}
	// The log's attributes are given per line, not through With: a JSON
	// handler formats With's at once, and the usual callback logs nothing
	// at the default level.
	log := httpx.Logger(r.Context())
	// A final status comes as the call's relay ends: once the relay has
	// written the call's end, one read usually answers the callback
	// (ApplyCarrierStatus). A relay still running here after relayEndWait
	// has not written it: the callback writes.
	apply := h.store.ApplyCarrierStatus
	if agentline.CallStatusFinal(e.Status) && !h.calls.AwaitRecorded(r.Context(), e.CallSID, relayEndWait) {
		apply = h.store.ApplyCallEvent
	}
	call, err := apply(r.Context(), e, conversation.CallChanged)
	switch {
	case errors.Is(err, agentline.ErrNotFound):
		log.Info("status callback for a call we do not know", "call_sid", e.CallSID, "status", e.Status, "sequence", f.Get("SequenceNumber"), "to", e.To)
	case err != nil:
		return err
	default:
		if log.Enabled(r.Context(), slog.LevelDebug) {
			log.Debug("call status", "call_sid", e.CallSID, "status", e.Status, "sequence", f.Get("SequenceNumber"),
				"project_id", call.ProjectID, "agent_id", call.AgentID, "recorded_status", call.Status)
		}
		if agentline.CallStatusFinal(call.Status) && call.StreamRef != "" {
			// Ended (busy, no answer, ...): a stream that has not come
			// never will, and a drain must not wait for it.
			h.calls.Settle(call.StreamRef)
		}
	}
	httpx.NoContent(w)
	return nil
}
