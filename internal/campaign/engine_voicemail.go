package campaign

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// VoicemailStore is what Voicemail needs from storage.
type VoicemailStore interface {
	CampaignCallOf(ctx context.Context, projectID, callID int64) (agentline.CampaignCall, error)
	MarkMessageLeft(ctx context.Context, projectID, dialID int64) (bool, error)
	UnmarkMessageLeft(ctx context.Context, projectID, dialID int64) error
}

// Voicemail hears machine detection's verdicts on the calls campaigns
// place (telephony.AnsweringMachine). It is apart from the Engine, whose
// calls go through the phone channel that calls it.
type Voicemail struct {
	store   VoicemailStore
	carrier Carrier
	log     *slog.Logger
}

// NewVoicemail returns the hook; carrier may be nil (no carrier account:
// no call is placed, nor heard of).
func NewVoicemail(store VoicemailStore, c Carrier, logger *slog.Logger) *Voicemail {
	if logger == nil {
		logger = slog.Default()
	}
	return &Voicemail{store: store, carrier: c, log: logger}
}

// Answered implements telephony.AnsweringMachine for the calls campaigns
// place: on a machine, hang_up ends the call at once; leave_message waits
// for the verdict given at the end of its greeting (machine_end_*, asked
// for with DetectMessageEnd) and replaces the call's TwiML with the
// message in the carrier's voice (<Say>), then <Hangup/>. The dial is
// marked first (its outcome becomes voicemail), so that the call's end,
// however soon it comes, settles it without a retry; if the carrier
// cannot speak it (the call ended), the mark is taken back. A fax is hung
// up on. A person (or a verdict of unknown) is the agent's, who speaks
// first as on every outbound call. Calls no campaign placed are left
// alone.
func (e *Voicemail) Answered(ctx context.Context, call agentline.Call, answeredBy string) error {
	machine := agentline.AnsweredByMachine(answeredBy)
	if !machine && answeredBy != agentline.AnsweredByFax || e.carrier == nil {
		return nil
	}
	cc, err := e.store.CampaignCallOf(ctx, call.ProjectID, call.ID)
	if errors.Is(err, agentline.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	vm := cc.Campaign.Voicemail
	switch {
	case !machine || vm.Action != agentline.VoicemailLeaveMessage || vm.Message == "":
		return e.hangUp(ctx, call)
	case answeredBy == agentline.AnsweredByMachineStart:
		return nil // the greeting goes on: the verdict at its end comes next
	}
	marked, err := e.store.MarkMessageLeft(ctx, call.ProjectID, cc.Dial.ID)
	if err != nil || !marked {
		return err
	}
	doc, err := carrier.SayAndHangUp(vm.Message)
	if err == nil {
		err = e.carrier.Redirect(ctx, call.CallSID, doc)
	}
	if err != nil {
		if uerr := e.store.UnmarkMessageLeft(ctx, call.ProjectID, cc.Dial.ID); uerr != nil {
			return errors.Join(err, uerr)
		}
		if errors.Is(err, carrier.ErrCallGone) {
			return nil
		}
		return fmt.Errorf("leave the voicemail: %w", err)
	}
	e.log.Info("campaign engine: leaving a voicemail", "campaign_id", cc.Campaign.ID, "contact_id", cc.Contact.ID, "call_id", call.ID)
	return nil
}

// hangUp ends a call a machine answered.
func (e *Voicemail) hangUp(ctx context.Context, call agentline.Call) error {
	if _, err := e.carrier.HangUp(ctx, call.CallSID); err != nil && !errors.Is(err, carrier.ErrCallGone) {
		return fmt.Errorf("hang up on the machine: %w", err)
	}
	e.log.Info("campaign engine: hung up on a machine", "call_id", call.ID)
	return nil
}
