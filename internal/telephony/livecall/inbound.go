package livecall

import (
	"context"
	"errors"
	"net/http"

	"github.com/twilio/twilio-go/twiml"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// notInService is what a caller hears when the dialed number takes no calls.
const notInService = "The number you have called is not in service. Goodbye."

// apology is what a caller hears when the model fails mid-call, instead of
// dead air.
const apology = "Sorry, we are having technical trouble and have to end this call. Please call again later. Goodbye."

// rejectBusy refuses a call unanswered with a busy signal: the caller is
// not billed and may dial again.
var rejectBusy, _ = twiml.Voice([]twiml.Element{twiml.VoiceReject{Reason: "busy"}})

// sayAndHangUp is TwiML that says text, then hangs up.
func sayAndHangUp(text string) string {
	s, _ := twiml.Voice([]twiml.Element{twiml.VoiceSay{Message: text}, twiml.VoiceHangup{}})
	return s
}

// POST /api/telephony/inbound: the voice webhook of every number (form
// encoded, signature-checked in production by Signatures.Check); the
// answer is TwiML.
func (h *Handler) inboundCall(w http.ResponseWriter, r *http.Request) error {
	f := r.PostForm
	doc, err := h.answerInbound(r.Context(), inboundRing{
		CallSID: f.Get("CallSid"), To: f.Get("To"), From: f.Get("From"), Status: f.Get("CallStatus"),
	})
	if err != nil {
		return err
	}
	writeTwiML(w, doc)
	return nil
}

// inboundRing is what the carrier's voice webhook says of a call coming in.
type inboundRing struct {
	CallSID, To, From string
	// Status is the call's status at the carrier; ringing when it is not
	// one.
	Status string
}

// answerInbound answers a call coming in with TwiML. A call to an active
// number with an agent is recorded, then connected to the agent's media
// stream with a stream token bound to the agent and this call, and its
// stream is expected here; any other call hears that the number is not in
// service, and a draining instance rejects it busy, so that the carrier
// may try again. Neither of those is recorded.
func (h *Handler) answerInbound(ctx context.Context, in inboundRing) (string, error) {
	sid, to := in.CallSID, in.To
	if !carrier.ValidCallSID(sid) {
		return "", agentline.Invalid("CallSid", "CallSid is missing or malformed")
	}
	if !agentline.ValidE164(to) {
		return "", agentline.Invalid("To", "To must be a phone number in E.164 form")
	}
	host, err := h.botHost()
	if err != nil {
		return "", err
	}
	log := httpx.Logger(ctx).With("call_sid", sid, "to", to)
	if h.live.isDraining() {
		log.Info("inbound call refused busy: this instance is draining")
		return rejectBusy, nil
	}
	status := in.Status
	if !agentline.ValidCallStatus(status) {
		status = agentline.CallRinging
	}
	call, agent, err := h.store.RecordInboundCall(ctx, agentline.CallEvent{CallSID: sid, Status: status, Direction: agentline.CallInbound, From: in.From, To: to},
		func(a agentline.Agent) error {
			if CheckAgent(a) != nil {
				return errors.Join(errNotInService, errors.New("agent cannot take calls"))
			}
			return nil
		}, conversation.CallChanged)
	if errors.Is(err, agentline.ErrNotFound) {
		err = h.whyNotInService(ctx, to)
	}
	if errors.Is(err, errNotInService) {
		log.Info("inbound call to a number that takes no calls", "why", err)
		return sayAndHangUp(notInService), nil
	}
	if err != nil {
		return "", err
	}
	token := streamtoken.Sign(h.secret, agent.ID, sid, agentline.CallInbound, h.now().Add(streamtoken.TTL))
	doc, err := carrier.StreamTwiML(host, agent.ID,
		carrier.StreamParam{Name: "call_sid", Value: sid}, carrier.StreamParam{Name: "direction", Value: agentline.CallInbound}, carrier.StreamParam{Name: "stream_token", Value: token})
	if err != nil {
		return "", err
	}
	log.Info("inbound call", "project_id", call.ProjectID, "agent_id", agent.ID, "call_id", call.ID)
	h.live.expect(sid, h.now().Add(inboundStreamGrace), h.now())
	return doc, nil
}

// errNotInService explains, for the log, why a number takes no calls.
var errNotInService = errors.New("not in service")

// whyNotInService is errNotInService joined with the reason the number to
// takes no calls, read once RecordInboundCall has found no agent for it.
func (h *Handler) whyNotInService(ctx context.Context, to string) error {
	n, err := h.store.PhoneNumberByE164(ctx, to)
	if errors.Is(err, agentline.ErrNotFound) {
		return errors.Join(errNotInService, errors.New("unknown number"))
	}
	if err != nil {
		return err
	}
	if n.Status != agentline.NumberActive || n.AgentID == nil {
		return errors.Join(errNotInService, errors.New("number is "+string(n.Status)))
	}
	_, err = h.store.PublishedAgent(ctx, n.ProjectID, *n.AgentID)
	if errors.Is(err, agentline.ErrNotFound) {
		return errors.Join(errNotInService, errors.New("agent is gone"))
	}
	if err != nil {
		return err
	}
	// The number was linked to an agent as the call came in.
	return errors.Join(errNotInService, errors.New("the number changed as the call came in"))
}

func writeTwiML(w http.ResponseWriter, doc string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(doc))
}
