package api

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// agentInput is the writable part of an agent; nil fields keep their value.
type agentInput struct {
	Name         *string `json:"name"`
	Instructions *string `json:"instructions"`
	Greeting     *string `json:"greeting"`
	Model        *string `json:"model"`
	Voice        *string `json:"voice"`
	Language     *string `json:"language"`
	// TransferNumber: see agentline.Agent; "" removes it.
	TransferNumber *string `json:"transfer_number"`
	RecordCalls    *bool   `json:"record_calls"`
	// Analysis replaces the agent's analysis settings whole.
	Analysis *agentline.AnalysisSettings `json:"analysis"`
	// ReviewBeforePublish keeps later saves as drafts until one is
	// published (POST /api/agents/{agent_id}/versions/{n}/publish).
	ReviewBeforePublish *bool `json:"review_before_publish"`
}

func (in agentInput) apply(a *agentline.Agent) error {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&a.Name, in.Name)
	set(&a.Instructions, in.Instructions)
	set(&a.Greeting, in.Greeting)
	set(&a.TransferNumber, in.TransferNumber)
	if in.RecordCalls != nil {
		a.RecordCalls = *in.RecordCalls
	}
	if in.ReviewBeforePublish != nil {
		a.ReviewBeforePublish = *in.ReviewBeforePublish
	}
	if in.Analysis != nil {
		a.Analysis = *in.Analysis
	}
	if in.Model != nil && *in.Model != a.Model && in.Voice == nil {
		// A new provider kind has other voices: start from its default.
		if p, err := agentline.ProviderForModel(*in.Model); err == nil && p != a.Provider {
			a.Voice = ""
		}
	}
	set(&a.Model, in.Model)
	set(&a.Voice, in.Voice)
	set(&a.Language, in.Language)
	if err := a.Validate(); err != nil {
		return err
	}
	if in.Voice == nil {
		// Unchanged, or the provider's default: an agent saved before
		// voices were checked stays editable.
		return nil
	}
	v, err := agentline.CatalogVoice(a.Provider, a.Model, a.Voice)
	a.Voice = v
	return err
}

func (h *Handler) listAgents(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.store.Agents(r.Context(), projectID)
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(a agentline.Agent) listing.Cursor { return listing.After(a.ID) })
}

func (h *Handler) createAgent(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in agentInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	a := agentline.Agent{ProjectID: projectID, Analysis: agentline.DefaultAnalysis()}
	if err := in.apply(&a); err != nil {
		return err
	}
	if a, err = h.store.CreateAgent(r.Context(), a); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, a)
	return nil
}

func (h *Handler) getAgent(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermView)
	if err != nil {
		return err
	}
	a, err := h.store.Agent(r.Context(), projectID, agentID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

func (h *Handler) updateAgent(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in agentInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	a, err := h.store.Agent(r.Context(), projectID, agentID)
	if err != nil {
		return err
	}
	if err := in.apply(&a); err != nil {
		return err
	}
	if a, err = h.store.UpdateAgent(r.Context(), a); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

func (h *Handler) deleteAgent(w http.ResponseWriter, r *http.Request) error {
	return h.auth.DeletePath(w, r, "agent_id", agentline.KindAgent, h.store.DeleteAgent)
}

// catalog serves GET /api/catalog: the models and voices the console's
// pickers offer, the webhook event types its webhooks page names and the
// settings a new campaign takes when left out, from the same tables and
// values the API validates, maps and creates with, so the console never
// hard-codes a list or a default that drifts from the server's.
func (h *Handler) catalog(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, struct {
		Models           []agentline.ModelChoice       `json:"models"`
		Voices           []agentline.VoiceChoice       `json:"voices"`
		DefaultVoices    map[agentline.Provider]string `json:"default_voices"`
		DefaultModel     string                        `json:"default_model"`
		EventTypes       []string                      `json:"event_types"`
		CampaignDefaults campaign.Defaults             `json:"campaign_defaults"`
	}{agentline.KnownModels(), agentline.Voices(), agentline.DefaultVoices(), agentline.DefaultModel, agentline.EventTypes(),
		campaign.NewDefaults()})
	return nil
}
