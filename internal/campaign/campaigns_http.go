package campaign

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Bounds of a campaign's settings. Fifty calls a second is past what one
// carrier account is allowed to start; a thousand live calls is past what
// one deployment relays. Ten attempts of the same person is already more
// than any calling rule tolerates.
const (
	MaxNameLength         = 200
	MaxConcurrentCalls    = 1000
	MaxCallsPerSecond     = 50
	MaxAttempts           = 10
	MaxVoicemailMessage   = 1000
	DefaultMaxAttempts    = 3
	DefaultCallsPerSecond = 1
	// DefaultConcurrentCalls is one live call at a time: a campaign that
	// says nothing dials as gently as the carrier's default rate, and an
	// owner raises it knowingly.
	DefaultConcurrentCalls = 1
)

// campaignInput is a create or PATCH body; absent fields keep their value.
type campaignInput struct {
	Name               *string         `json:"name"`
	AgentID            *int64          `json:"agent_id"`
	CallingWindow      *windowInput    `json:"calling_window"`
	MaxConcurrentCalls *int            `json:"max_concurrent_calls"`
	CallsPerSecond     *float64        `json:"calls_per_second"`
	MaxAttempts        *int            `json:"max_attempts"`
	RetryAfter         *string         `json:"retry_after"`
	Voicemail          *voicemailInput `json:"voicemail"`
}

// windowInput changes the fields of a window it names.
type windowInput struct {
	Days  *[]string `json:"days"`
	Start *string   `json:"start"`
	End   *string   `json:"end"`
}

// voicemailInput changes the fields of a voicemail setting it names.
type voicemailInput struct {
	Action  *string `json:"action"`
	Message *string `json:"message"`
}

// newCampaign is a campaign of the project with every default.
func newCampaign(projectID int64) agentline.Campaign {
	return agentline.Campaign{
		ProjectID: projectID, Status: agentline.CampaignDraft,
		CallingWindow:      agentline.CallingWindow(DefaultWindow()),
		MaxConcurrentCalls: DefaultConcurrentCalls, CallsPerSecond: DefaultCallsPerSecond,
		MaxAttempts: DefaultMaxAttempts, RetryAfter: DefaultRetryAfter,
		Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp},
	}
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in campaignInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	switch {
	case in.Name == nil:
		return agentline.Invalid("name", "name is required")
	case in.AgentID == nil:
		return agentline.Invalid("agent_id", "agent_id is required: the agent that makes the calls, from its phone number")
	}
	c := newCampaign(projectID)
	if err := h.apply(r.Context(), &c, in); err != nil {
		return err
	}
	if c, err = h.store.CreateCampaign(r.Context(), c); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, view(c))
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	limit, after, err := listing.IntPage(r.URL.Query())
	if err != nil {
		return err
	}
	list, err := h.store.Campaigns(r.Context(), projectID, after, limit+1)
	if err != nil {
		return err
	}
	list, next := listing.Next(list, limit, func(c agentline.Campaign) listing.Cursor { return listing.After(c.ID) })
	views := make([]campaignView, len(list))
	for i, c := range list {
		views[i] = view(c)
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Campaigns  []campaignView `json:"campaigns"`
		NextCursor *string        `json:"next_cursor"`
	}{views, next})
	return nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	c, err := h.campaign(r, agentline.PermView)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, view(c))
	return nil
}

// update changes what the body names. A running campaign's window,
// limits and retry settings apply to its next dials; its agent stays the
// one it started with. A window that would never open for some of the
// contacts still to be called is refused (strandCheck).
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	c, err := h.campaign(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in campaignInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.AgentID != nil && *in.AgentID != c.AgentID && c.Status != agentline.CampaignDraft {
		return agentline.Errorf(agentline.EConflict, "the campaign is %s: only a draft campaign's agent can change; make a new campaign for another agent", c.Status)
	}
	was := c.CallingWindow
	if err := h.apply(r.Context(), &c, in); err != nil {
		return err
	}
	var check func([]agentline.CampaignContact) error
	if !c.CallingWindow.Equal(was) && c.Status != agentline.CampaignCancelled {
		check = strandCheck(Window(c.CallingWindow), time.Now())
	}
	if c, err = h.store.UpdateCampaignChecked(r.Context(), c, check); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, view(c))
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	return h.auth.DeletePath(w, r, "campaign_id", agentline.KindCampaign, h.store.DeleteCampaign)
}

// apply checks in and sets what it holds on c; a problem names its field.
func (h *Handler) apply(ctx context.Context, c *agentline.Campaign, in campaignInput) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || utf8.RuneCountInString(name) > MaxNameLength || !cleanText(name) {
			return agentline.Invalid("name", "name must be 1 to %d characters of text", MaxNameLength)
		}
		c.Name = name
	}
	if in.AgentID != nil {
		if err := h.checkAgent(ctx, c.ProjectID, *in.AgentID); err != nil {
			return err
		}
		c.AgentID = *in.AgentID
	}
	if in.CallingWindow != nil {
		w := Window(c.CallingWindow)
		w.Days = slices.Clone(w.Days)
		if err := in.CallingWindow.apply(&w); err != nil {
			return err
		}
		c.CallingWindow = agentline.CallingWindow(w)
	}
	if err := applyLimits(c, in); err != nil {
		return err
	}
	if in.Voicemail != nil {
		return in.Voicemail.apply(&c.Voicemail)
	}
	return nil
}

func (h *Handler) checkAgent(ctx context.Context, projectID, agentID int64) error {
	if agentID <= 0 {
		return agentline.Invalid("agent_id", "agent_id must be the id of an agent of this project")
	}
	_, err := h.store.Agent(ctx, projectID, agentID)
	if errors.Is(err, agentline.ErrNotFound) {
		return agentline.Invalid("agent_id", "agent %d is not an agent of this project", agentID)
	}
	return err
}

func (in windowInput) apply(w *Window) error {
	if in.Days != nil {
		w.Days = *in.Days
	}
	if in.Start != nil {
		w.Start = *in.Start
	}
	if in.End != nil {
		w.End = *in.End
	}
	return w.Validate()
}

// applyLimits checks and sets the concurrency, rate, attempts and retry.
func applyLimits(c *agentline.Campaign, in campaignInput) error {
	if v := in.MaxConcurrentCalls; v != nil {
		if *v < 1 || *v > MaxConcurrentCalls {
			return agentline.Invalid("max_concurrent_calls", "max_concurrent_calls must be a whole number from 1 to %d", MaxConcurrentCalls)
		}
		c.MaxConcurrentCalls = *v
	}
	if v := in.CallsPerSecond; v != nil {
		if !(*v > 0 && *v <= MaxCallsPerSecond) {
			return agentline.Invalid("calls_per_second", "calls_per_second must be more than 0 and at most %d, such as 1 or 0.5", MaxCallsPerSecond)
		}
		c.CallsPerSecond = *v
	}
	if v := in.MaxAttempts; v != nil {
		if *v < 1 || *v > MaxAttempts {
			return agentline.Invalid("max_attempts", "max_attempts must be a whole number from 1 to %d", MaxAttempts)
		}
		c.MaxAttempts = *v
	}
	if in.RetryAfter != nil {
		d, err := ParseRetryAfter(*in.RetryAfter)
		if err != nil {
			return err
		}
		c.RetryAfter = d
	}
	return nil
}

func (in voicemailInput) apply(v *agentline.Voicemail) error {
	if in.Action != nil {
		switch *in.Action {
		case agentline.VoicemailHangUp, agentline.VoicemailLeaveMessage:
			v.Action = *in.Action
		default:
			return agentline.Invalid("voicemail.action", `voicemail.action must be "hang_up" or "leave_message"; got %s`, quote(*in.Action))
		}
	}
	if in.Message != nil {
		msg := strings.TrimSpace(*in.Message)
		if utf8.RuneCountInString(msg) > MaxVoicemailMessage || !cleanText(msg) {
			return agentline.Invalid("voicemail.message", "voicemail.message must be text of at most %d characters", MaxVoicemailMessage)
		}
		v.Message = msg
	}
	if v.Action == agentline.VoicemailLeaveMessage && v.Message == "" {
		return agentline.Invalid("voicemail.message", `voicemail.message is required with "leave_message": the words spoken after the beep`)
	}
	return nil
}
