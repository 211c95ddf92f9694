package campaign

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// move is one of the transitions a person asks for: the statuses it
// leaves and the one it enters. completed is the engine's to enter, once
// a running campaign has no contact left to call.
type move struct {
	verb string // as the refusal names it: "started"
	from []string
	to   string
	// dials is set for the moves after which the campaign dials, which
	// need its agent's number.
	dials bool
}

var (
	startMove  = move{"started", []string{agentline.CampaignDraft}, agentline.CampaignRunning, true}
	pauseMove  = move{"paused", []string{agentline.CampaignRunning}, agentline.CampaignPaused, false}
	resumeMove = move{"resumed", []string{agentline.CampaignPaused}, agentline.CampaignRunning, true}
	cancelMove = move{"cancelled", []string{agentline.CampaignDraft, agentline.CampaignRunning, agentline.CampaignPaused},
		agentline.CampaignCancelled, false}
)

// start makes a draft campaign running: the engine dials its contacts
// from then on, each inside its window.
func (h *Handler) start(w http.ResponseWriter, r *http.Request) error { return h.move(w, r, startMove) }

// pause stops new dials at once; live calls go on to their end.
func (h *Handler) pause(w http.ResponseWriter, r *http.Request) error { return h.move(w, r, pauseMove) }

// resume makes a paused campaign dial again.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request) error {
	return h.move(w, r, resumeMove)
}

// cancel ends a campaign for good: no contact of it is dialed again, and
// its pending contacts stay pending. Live calls go on to their end.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) error {
	return h.move(w, r, cancelMove)
}

func (h *Handler) move(w http.ResponseWriter, r *http.Request, m move) error {
	c, err := h.campaign(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	if !slices.Contains(m.from, c.Status) {
		return m.refusal(c.Status)
	}
	if m.dials {
		if err := h.checkNumber(r.Context(), c); err != nil {
			return err
		}
	}
	c, moved, err := h.store.TransitionCampaign(r.Context(), c.ProjectID, c.ID, m.from, m.to)
	if err != nil {
		return err
	}
	if !moved {
		return m.refusal(c.Status)
	}
	httpx.WriteJSON(w, http.StatusOK, view(c))
	return nil
}

// refusal is the conflict of a move asked of a campaign in another status.
func (m move) refusal(status string) error {
	return agentline.Errorf(agentline.EConflict, "the campaign is %s; only a %s campaign can be %s", status, orList(m.from), m.verb)
}

// checkNumber refuses to let a campaign dial while its agent has no
// active number: its calls go out from that number.
func (h *Handler) checkNumber(ctx context.Context, c agentline.Campaign) error {
	n, err := h.store.AgentPhoneNumber(ctx, c.ProjectID, c.AgentID)
	if errors.Is(err, agentline.ErrNotFound) {
		return agentline.Errorf(agentline.EConflict, "the campaign's agent (%d) has no phone number, and its calls go out from that number; link a number to the agent first", c.AgentID)
	}
	if err != nil {
		return err
	}
	if n.Status != agentline.NumberActive {
		return agentline.Errorf(agentline.EConflict, "the campaign's agent's number %s is %s; make it active first", n.PhoneNumber, n.Status)
	}
	return nil
}

// orList is "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
