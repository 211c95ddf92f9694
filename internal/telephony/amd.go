package telephony

import (
	"context"
	"errors"
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// The carrier's callbacks about calls we place, at BOT_HOST: their status
// changes, and machine detection's verdict.
const (
	statusPath = "/api/telephony/status"
	amdPath    = "/api/telephony/amd"
)

// AnsweringMachine hears who answered an outbound call placed with machine
// detection (CallOptions.MachineDetection). The campaign engine implements
// it, to hang up on a machine or to leave a message after its beep; a
// person is left to the agent, who speaks first as on every outbound call.
// It is called once per new verdict (agentline.AnsweredBy...), after the
// verdict is on the call's record, with a context the carrier's request
// does not cut short. An error is logged and answered to the carrier as a
// failure; the carrier does not send the verdict again.
type AnsweringMachine interface {
	Answered(ctx context.Context, call agentline.Call, answeredBy string) error
}

// POST /api/telephony/amd: machine detection's verdict on a call placed
// with it (form encoded: CallSid, AnsweredBy, MachineDetectionDuration;
// signature-checked like every carrier webhook by Signatures.Check). The
// verdict is recorded on the call, then the AnsweringMachine hears it. Any
// well-formed verdict is acknowledged with 204, including one about a call
// we do not know, so the carrier does not log errors for it.
func (h *Handler) amdCallback(w http.ResponseWriter, r *http.Request) error {
	sid, answeredBy := r.PostForm.Get("CallSid"), r.PostForm.Get("AnsweredBy")
	if !carrier.ValidCallSID(sid) {
		return agentline.Invalid("CallSid", "CallSid is missing or malformed")
	}
	if !agentline.ValidAnsweredBy(answeredBy) {
		return agentline.Invalid("AnsweredBy", "AnsweredBy %q is not a machine detection verdict", answeredBy)
	}
	ctx := context.WithoutCancel(r.Context())
	log := httpx.Logger(ctx).With("call_sid", sid, "answered_by", answeredBy, "detection_ms", r.PostForm.Get("MachineDetectionDuration"))
	projectID, err := h.store.ProjectOfCall(ctx, sid)
	var call agentline.Call
	changed := false
	if err == nil {
		call, changed, err = h.store.RecordAnsweredBy(ctx, projectID, sid, answeredBy)
	}
	switch {
	case errors.Is(err, agentline.ErrNotFound):
		log.Info("machine detection verdict for a call we do not know")
	case err != nil:
		return err
	case changed && h.machine != nil:
		if err := h.machine.Answered(ctx, call, answeredBy); err != nil {
			log.Error("the answering machine hook failed", "project_id", call.ProjectID, "call_id", call.ID, "err", err)
			return err
		}
		log.Info("call answered", "project_id", call.ProjectID, "call_id", call.ID)
	default:
		log.Info("call answered", "project_id", call.ProjectID, "call_id", call.ID, "changed", changed)
	}
	httpx.NoContent(w)
	return nil
}
