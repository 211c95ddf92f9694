package widget

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/provider"
)

// sessionRequest is what a client asks to start: a conversation with the
// channel's agent, fresh, or continuing the pending session a live chat
// form's submission created.
type sessionRequest struct {
	AgentID int64
	// SessionID is the pending session to continue, or "" for a new one.
	SessionID string
	// Origin is the page's origin as the browser sent it, kept with the
	// session for the sessions list.
	Origin string
	// Modality is "text" for a visitor who types (no microphone, text
	// answers), "audio" or "" for a spoken conversation.
	Modality string
}

// startedSession is a stored session and the provider token its client
// connects with.
type startedSession struct {
	Session  agentline.WidgetSession
	Token    provider.Token
	Modality provider.Modality
}

// modalityOf checks a request's modality; "" is audio, as before the field
// existed.
func modalityOf(m string) (provider.Modality, error) {
	switch provider.Modality(m) {
	case "", provider.Audio:
		return provider.Audio, nil
	case provider.Text:
		return provider.Text, nil
	}
	return "", agentline.Invalid("modality", "modality must be \"audio\" (the default) or \"text\"")
}

// maxStoredOrigin bounds the Origin kept with a session: any origin passes
// a key with an empty allowed_origins list, so its length is the client's.
const maxStoredOrigin = 300

// startSession starts a conversation on channel ch. The provider token is
// minted before anything is stored, so a provider that refuses (or is not
// configured) leaves no session behind, and a pending session stays
// pending for the visitor to try again.
func (h *Handler) startSession(ctx context.Context, ch channelRef, in sessionRequest) (startedSession, error) {
	if in.AgentID <= 0 {
		return startedSession{}, agentline.Invalid("agent_id", "agent_id is required: the id of the channel's agent from GET /widget/v1/config")
	}
	modality, err := modalityOf(in.Modality)
	if err != nil {
		return startedSession{}, err
	}
	if h.draining.Load() {
		return startedSession{}, errDraining
	}
	agent, pending, view, err := h.sessionAgent(ctx, ch, in)
	if err != nil {
		return startedSession{}, err
	}
	defs, err := view.toolDefs(ctx, h.tools, agent)
	if err != nil {
		return startedSession{}, fmt.Errorf("tools of agent %d: %w", agent.ID, err)
	}
	tok, err := h.provider.SessionToken(ctx, agent, defs, modality)
	if err != nil {
		return startedSession{}, fmt.Errorf("provider token for agent %d: %w", agent.ID, err)
	}
	origin := in.Origin
	if len(origin) > maxStoredOrigin {
		origin = origin[:maxStoredOrigin]
	}
	s := agentline.WidgetSession{ProjectID: ch.key.ProjectID, ChannelID: ch.key.ChannelID, AgentID: agent.ID,
		Origin: origin, Provider: agent.Provider, Model: agent.Model, AgentVersion: agent.Running}
	if pending != nil {
		s.ID = pending.ID
		s, err = h.store.StartWidgetSession(ctx, s, conversation.Started)
	} else {
		if s.ID, err = agentline.NewSessionID(); err != nil {
			return startedSession{}, fmt.Errorf("new session id: %w", err)
		}
		s, err = h.store.CreateWidgetSession(ctx, s, conversation.Started)
	}
	if err != nil {
		return startedSession{}, fmt.Errorf("store session: %w", err)
	}
	httpx.TagConversation(ctx, s.ID)
	httpx.Logger(ctx).Info("widget session started", "session_id", s.ID, "agent_id", agent.ID, "provider", agent.Provider, "modality", modality)
	return startedSession{Session: s, Token: tok, Modality: modality}, nil
}

// sessionAgent checks that the request may talk to its agent on channel
// ch. It returns the agent, whose instructions carry a form lead's answers
// when the session continues a form, the pending session to continue, if
// any, and the channel's view. A form channel's conversations must
// continue one: the form is their gate.
func (h *Handler) sessionAgent(ctx context.Context, ch channelRef, in sessionRequest) (agentline.Agent, *agentline.WidgetSession, *channelView, error) {
	view, err := h.viewOf(ctx, ch)
	if err != nil {
		return agentline.Agent{}, nil, nil, fmt.Errorf("channel of key: %w", err)
	}
	c := view.channel
	if c.AgentID == nil || *c.AgentID != in.AgentID {
		return agentline.Agent{}, nil, nil, agentline.Errorf(agentline.EForbidden, "agent %d is not the agent of this key's channel", in.AgentID)
	}
	var pending *agentline.WidgetSession
	if in.SessionID != "" {
		s, err := h.sessionOfChannel(ctx, ch, in.SessionID)
		if err != nil {
			return agentline.Agent{}, nil, nil, err
		}
		if s.AgentID != in.AgentID {
			return agentline.Agent{}, nil, nil, agentline.Errorf(agentline.EForbidden, "session %s is with another agent", in.SessionID)
		}
		if s.Provider != "" {
			// Started already: one form submission, one provider token.
			// The store's conditional start settles racing requests.
			return agentline.Agent{}, nil, nil, agentline.Errorf(agentline.EConflict, "session %s has been started already: submit the form again for a new conversation", in.SessionID)
		}
		pending = &s
	}
	if c.Type == agentline.ChannelForm && pending == nil {
		return agentline.Agent{}, nil, nil, agentline.Invalid("session_id", "a form channel's conversations start with the form: submit it, then send the session_id it answers")
	}
	if view.agent == nil {
		return agentline.Agent{}, nil, nil, fmt.Errorf("agent %d: %w", in.AgentID, agentline.ErrNotFound)
	}
	agent := *view.agent // a copy: a lead's answers go into its instructions
	if pending == nil {
		return agent, nil, view, nil
	}
	lead, err := h.store.LeadBySession(ctx, ch.key.ProjectID, pending.ID)
	if err == nil {
		agent.Instructions = strings.TrimSpace(agent.Instructions + "\n\n" + lead.Context(c.Settings.Form))
	} else if !errors.Is(err, agentline.ErrNotFound) {
		return agentline.Agent{}, nil, nil, fmt.Errorf("lead of session %s: %w", pending.ID, err)
	}
	return agent, pending, view, nil
}

// viewOf returns what sessions read about channel ch. A real
// channel's comes from the config cache (the config request the widget made
// just before read it), so a new session reads no database. A console
// test's virtual channel is built for each request from the agent and
// never cached: its channel id, TestChannelID, is the same for every
// agent of every project, so a cached view would hand one agent's channel
// to another's test.
func (h *Handler) viewOf(ctx context.Context, ch channelRef) (*channelView, error) {
	if ch.testAgent == 0 {
		return h.configs.get(ctx, ch.key)
	}
	a, err := h.store.AgentAtVersion(ctx, ch.key.ProjectID, ch.testAgent, ch.testVersion)
	if err != nil {
		return nil, fmt.Errorf("agent %d: %w", ch.testAgent, err)
	}
	c := agentline.Channel{ID: TestChannelID, ProjectID: ch.key.ProjectID, AgentID: &a.ID,
		Type: agentline.ChannelVoiceWidget, Name: "Console test"}
	return &channelView{channel: c, agent: &a}, nil
}

// channelView is what the public API reads about a key's channel, cached
// with its config answer for the cache's TTL and dropped with it on a
// change to the channel (Handler.forget); an agent or tool edited meanwhile
// reaches new sessions within that TTL, as it reaches the config answer.
type channelView struct {
	body    []byte // the config answer
	channel agentline.Channel
	agent   *agentline.Agent // the channel's agent; nil when it has none

	mu       sync.Mutex
	defs     []agentline.ToolDefinition
	haveDefs bool
}

// toolDefs returns the agent's tool definitions, read once per view (the
// config path does not need them, so the first session reads them).
func (v *channelView) toolDefs(ctx context.Context, tools Tools, agent agentline.Agent) ([]agentline.ToolDefinition, error) {
	if tools == nil {
		return nil, nil
	}
	v.mu.Lock()
	defs, ok := v.defs, v.haveDefs
	v.mu.Unlock()
	if ok {
		return defs, nil
	}
	defs, err := tools.Definitions(ctx, agent)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.defs, v.haveDefs = defs, true
	v.mu.Unlock()
	return defs, nil
}
