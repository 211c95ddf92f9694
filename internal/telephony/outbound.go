package telephony

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/livecall"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// POST /api/agents/{agent_id}/telephony/outbound {to_number}
func (h *Handler) outboundCall(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in struct {
		ToNumber string `json:"to_number"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	call, err := h.placeCall(r.Context(), projectID, agentID, in.ToNumber)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, struct {
		CallSID string `json:"call_sid"`
		Status  string `json:"status"`
	}{call.CallSID, call.Status})
	return nil
}

// placeCall places the single-call endpoint's call: PlaceCall with no
// options, as the spec has it.
func (h *Handler) placeCall(ctx context.Context, projectID, agentID int64, to string) (agentline.Call, error) {
	return h.PlaceCall(ctx, projectID, agentID, to, CallOptions{})
}

// CallOptions are what a caller other than the single-call endpoint (the
// campaign engine) may ask of an outbound call; the zero value asks
// nothing more.
type CallOptions struct {
	// MachineDetection asks the carrier to tell a person from an answering
	// machine, in the background: carrier.AMDEnable (a verdict as soon as
	// it knows, to hang up on machines) or carrier.AMDDetectMessageEnd (a
	// machine's verdict after its greeting, to leave a message); "" asks
	// nothing. The verdict comes to POST /api/telephony/amd, which records
	// it on the call and tells the AnsweringMachine.
	MachineDetection string
	// Dial is the campaign dial (campaign_dials.id) the call is for, or 0.
	// Its reserved record is linked to the dial in the reservation's own
	// transaction (store.ReserveDialCall), so that the dial names its call
	// before the carrier is asked; and a carrier that does not answer the
	// request (it may have placed the call) leaves that record reserved for
	// the engine's recovery to settle with the carrier, instead of removing
	// it: a call of an attempt is never made twice blindly.
	Dial int64
	// Interval paces a campaign's calls where it counts, at the carrier:
	// the reservation of a Dial's call takes its campaign's send slot
	// (store.ReserveDialCall), waiting for it, and the carrier is asked
	// right after, so two calls of the campaign reach the carrier at least
	// Interval apart, from any instance. 0 paces nothing.
	Interval time.Duration
}

// PlaceCall places one call from the agent's number to to. The call is
// recorded (under the project's cap on live calls) before the carrier is
// asked, so the cap holds however many requests race; its TwiML opens the
// same media stream as inbound calls, marked outbound so the agent speaks
// first, with a signed stream token and the record's stream_ref.
//
// Once the carrier is asked, the caller's context no longer cuts the work
// short: the record must end up matching what the carrier did. A call the
// carrier refuses loses its record; a call the carrier placed but that could
// not be recorded is hung up, and its reserved record is left as it is.
func (h *Handler) PlaceCall(ctx context.Context, projectID, agentID int64, to string, opts CallOptions) (agentline.Call, error) {
	if !agentline.ValidE164(to) {
		return agentline.Call{}, agentline.Invalid("to_number", "to_number must be in E.164 form, such as +14155550100")
	}
	if opts.MachineDetection != "" && !carrier.ValidAMDMode(opts.MachineDetection) {
		return agentline.Call{}, agentline.Invalid("machine_detection", "machine detection %q is neither %s nor %s",
			opts.MachineDetection, carrier.AMDEnable, carrier.AMDDetectMessageEnd)
	}
	if h.calls.Draining() {
		return agentline.Call{}, errDraining
	}
	number, err := h.callingNumber(ctx, projectID, agentID, to)
	if err != nil {
		return agentline.Call{}, err
	}
	cr, err := h.carrier()
	if err != nil {
		return agentline.Call{}, err
	}
	host, err := h.botHost()
	if err != nil {
		return agentline.Call{}, err
	}
	ref, err := newStreamRef()
	if err != nil {
		return agentline.Call{}, err
	}
	token := streamtoken.Sign(h.secret, agentID, ref, agentline.CallOutbound, h.now().Add(streamtoken.TTL))
	twiml, err := carrier.StreamTwiML(host, agentID, carrier.StreamParam{Name: "direction", Value: agentline.CallOutbound},
		carrier.StreamParam{Name: "stream_token", Value: token}, carrier.StreamParam{Name: "stream_ref", Value: ref})
	if err != nil {
		return agentline.Call{}, err
	}
	reserved := agentline.Call{
		ProjectID: projectID, AgentID: agentID, NumberID: &number.ID, CallSID: agentline.PendingCallSID(ref),
		Direction: agentline.CallOutbound, From: number.PhoneNumber, To: to,
		Status: agentline.CallQueued, StreamRef: ref,
	}
	var call agentline.Call
	if opts.Dial != 0 {
		call, err = h.store.ReserveDialCall(ctx, reserved, h.maxCalls, opts.Dial, opts.Interval)
	} else {
		call, err = h.store.ReserveCall(ctx, reserved, h.maxCalls)
	}
	if err != nil {
		return agentline.Call{}, err
	}
	req := carrier.CallRequest{To: to, From: number.PhoneNumber, TwiML: twiml, StatusCallbackURL: "https://" + host + statusPath}
	if opts.MachineDetection != "" {
		req.MachineDetection = &carrier.MachineDetection{Mode: opts.MachineDetection, CallbackURL: "https://" + host + amdPath}
	}
	return h.dial(context.WithoutCancel(ctx), cr, call, req, opts.Dial != 0)
}

// callingNumber returns the number an agent of the project calls to from:
// the agent must take calls and have an active number that is not to.
func (h *Handler) callingNumber(ctx context.Context, projectID, agentID int64, to string) (agentline.PhoneNumber, error) {
	agent, err := h.store.PublishedAgent(ctx, projectID, agentID)
	if err != nil {
		return agentline.PhoneNumber{}, err
	}
	if err := livecall.CheckAgent(agent); err != nil {
		return agentline.PhoneNumber{}, err
	}
	number, err := h.store.AgentPhoneNumber(ctx, projectID, agentID)
	if errors.Is(err, agentline.ErrNotFound) {
		return number, agentline.Invalid("", "agent %d has no phone number to call from: provision one first", agentID)
	}
	if err != nil {
		return number, err
	}
	if number.Status != agentline.NumberActive {
		return number, agentline.Invalid("", "the agent's number %s is %s: make it active before calling out", number.PhoneNumber, number.Status)
	}
	if to == number.PhoneNumber {
		return number, agentline.Invalid("to_number", "to_number is the agent's own number")
	}
	return number, nil
}

// dial asks the carrier to place the reserved call and records its answer.
// ctx must not end with the request: the carrier client's timeout bounds
// each step. A campaign's call (keepUnanswered) whose request got no
// answer keeps its reserved record: the carrier may have placed it.
func (h *Handler) dial(ctx context.Context, cr carrier.Carrier, call agentline.Call, req carrier.CallRequest, keepUnanswered bool) (agentline.Call, error) {
	log := httpx.Logger(ctx).With("project_id", call.ProjectID, "agent_id", call.AgentID, "call_id", call.ID)
	// The stream may come before the carrier's answer to the request.
	h.calls.ExpectOutbound(call.StreamRef)
	cc, err := cr.CreateCall(ctx, req)
	if err != nil {
		h.calls.Settle(call.StreamRef)
		if keepUnanswered && errors.Is(err, carrier.ErrNoAnswer) {
			log.Warn("the carrier did not answer a campaign call's request: its record waits for recovery", "err", err)
			return agentline.Call{}, err
		}
		if derr := h.store.DeleteCall(ctx, call.ProjectID, call.ID); derr != nil {
			log.Error("could not remove the record of a call the carrier refused", "err", derr)
		}
		return agentline.Call{}, err
	}
	recorded, err := h.store.AttachCallSID(ctx, call.ProjectID, call.ID, cc.SID, cc.Status)
	if err != nil {
		if _, herr := cr.HangUp(ctx, cc.SID); herr != nil {
			log.Error("placed a call, could not record it, and could not hang it up", "call_sid", cc.SID, "err", herr)
		}
		return agentline.Call{}, err
	}
	log.Info("placed an outbound call", "call_sid", cc.SID, "status", cc.Status)
	return recorded, nil
}

// errDraining answers requests that would start a call on a draining
// instance.
var errDraining = &agentline.Error{Code: agentline.EUnavailable, RetryAfter: 1,
	Message: "this instance is shutting down and takes no new calls; retry, and another instance will take it"}

// newStreamRef returns the random reference that binds an outbound call's
// stream token to its record before the carrier has given the call a SID.
func newStreamRef() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "sr_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}
