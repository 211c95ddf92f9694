package widget

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// channelInput is the writable part of a channel; nil fields keep their
// value. agent_id is raw so that null (no agent) differs from absent.
type channelInput struct {
	Type     *agentline.ChannelType `json:"type"`
	AgentID  json.RawMessage        `json:"agent_id"`
	Name     *string                `json:"name"`
	Settings *settingsInput         `json:"settings"`
}

type settingsInput struct {
	Color          *string    `json:"color"`
	Position       *string    `json:"position"`
	ShowTranscript *bool      `json:"show_transcript"`
	ShowTextChat   *bool      `json:"show_text_chat"`
	Form           *formInput `json:"form"`
}

// formInput is the writable part of settings.form; nil fields keep their
// value, fields replaces the whole list.
type formInput struct {
	Mode            *agentline.FormMode    `json:"mode"`
	Fields          *[]agentline.FormField `json:"fields"`
	SubmitLabel     *string                `json:"submit_label"`
	ThankYouMessage *string                `json:"thank_you_message"`
	NotifyURL       *string                `json:"notify_url"`
	// CampaignID is raw so that null (no campaign) differs from absent.
	CampaignID json.RawMessage `json:"campaign_id"`
}

// apply changes f by the input.
func (in *formInput) apply(f *agentline.FormSettings) error {
	if in.Mode != nil {
		f.Mode = *in.Mode
	}
	if in.Fields != nil {
		f.Fields = *in.Fields
		if f.Fields == nil {
			f.Fields = []agentline.FormField{}
		}
	}
	if in.SubmitLabel != nil {
		f.SubmitLabel = *in.SubmitLabel
	}
	if in.ThankYouMessage != nil {
		f.ThankYouMessage = *in.ThankYouMessage
	}
	if in.NotifyURL != nil {
		f.NotifyURL = *in.NotifyURL
	}
	if raw := bytes.TrimSpace(in.CampaignID); len(raw) > 0 {
		f.CampaignID = nil
		if string(raw) != "null" {
			var id int64
			if err := json.Unmarshal(raw, &id); err != nil || id <= 0 {
				return agentline.Invalid("settings.form.campaign_id", "campaign_id must be the id of a campaign of this project, or null")
			}
			f.CampaignID = &id
		}
	}
	return nil
}

// apply changes c by the input and validates the result, including that
// the agent is one of the channel's project.
func (h *Handler) apply(ctx context.Context, in channelInput, c *agentline.Channel) error {
	if in.Type != nil {
		if c.ID != 0 && *in.Type != c.Type {
			return agentline.Invalid("type", "a channel's type cannot change; create another channel")
		}
		c.Type = *in.Type
	}
	if raw := bytes.TrimSpace(in.AgentID); len(raw) > 0 {
		if string(raw) == "null" {
			c.AgentID = nil
		} else {
			var id int64
			if err := json.Unmarshal(raw, &id); err != nil || id <= 0 {
				return agentline.Invalid("agent_id", "agent_id must be the id of an agent of this project, or null")
			}
			c.AgentID = &id
		}
	}
	if in.Name != nil {
		c.Name = *in.Name
	}
	if s := in.Settings; s != nil {
		if s.Color != nil {
			c.Settings.Color = *s.Color
		}
		if s.Position != nil {
			c.Settings.Position = *s.Position
		}
		if s.ShowTranscript != nil {
			c.Settings.ShowTranscript = *s.ShowTranscript
		}
		if s.ShowTextChat != nil {
			c.Settings.ShowTextChat = *s.ShowTextChat
		}
		if s.Form != nil {
			if c.Type != agentline.ChannelForm {
				return agentline.Invalid("settings.form", "only form channels have settings.form")
			}
			if c.Settings.Form == nil {
				c.Settings.Form = agentline.DefaultFormSettings()
			}
			if err := s.Form.apply(c.Settings.Form); err != nil {
				return err
			}
		}
	}
	if err := c.Validate(); err != nil {
		return err
	}
	// The domain checked notify_url's form; where it may lead is the
	// outgoing address policy's to say.
	if f := c.Settings.Form; f != nil && f.NotifyURL != "" {
		if err := egress.CheckURL("settings.form.notify_url", f.NotifyURL, h.allowPrivate); err != nil {
			return err
		}
	}
	if c.AgentID != nil {
		if _, err := h.store.Agent(ctx, c.ProjectID, *c.AgentID); errors.Is(err, agentline.ErrNotFound) {
			return agentline.Invalid("agent_id", "agent %d is not an agent of this project", *c.AgentID)
		} else if err != nil {
			return err
		}
	}
	if f := c.Settings.Form; f != nil && f.CampaignID != nil {
		if _, err := h.store.Campaign(ctx, c.ProjectID, *f.CampaignID); errors.Is(err, agentline.ErrNotFound) {
			return agentline.Invalid("settings.form.campaign_id", "campaign %d is not a campaign of this project", *f.CampaignID)
		} else if err != nil {
			return err
		}
	}
	return nil
}

func (h *Handler) listChannels(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.store.Channels(r.Context(), projectID)
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(c agentline.Channel) listing.Cursor { return listing.After(c.ID) })
}

func (h *Handler) createChannel(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in channelInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	// A new widget shows its transcript and text chat unless asked not to:
	// what visitors expect of a chat widget, and what the console's
	// preview starts from.
	c := agentline.Channel{ProjectID: projectID, Settings: agentline.ChannelSettings{ShowTranscript: true, ShowTextChat: true}}
	if err := h.apply(r.Context(), in, &c); err != nil {
		return err
	}
	if c, err = h.store.CreateChannel(r.Context(), c); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, c)
	return nil
}

func (h *Handler) getChannel(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.authorizeChannel(r, agentline.PermView)
	if err != nil {
		return err
	}
	c, err := h.store.Channel(r.Context(), projectID, channelID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *Handler) updateChannel(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.authorizeChannel(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in channelInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	c, err := h.store.Channel(r.Context(), projectID, channelID)
	if err != nil {
		return err
	}
	if err := h.apply(r.Context(), in, &c); err != nil {
		return err
	}
	if c, err = h.store.UpdateChannel(r.Context(), c); err != nil {
		return err
	}
	h.forget(channelID)
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *Handler) deleteChannel(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.authorizeChannel(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	if err := h.store.DeleteChannel(r.Context(), projectID, channelID); err != nil {
		return err
	}
	h.forget(channelID)
	httpx.NoContent(w)
	return nil
}
