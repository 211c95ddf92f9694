package widget

// Console test sessions: the agent page's Test panel talks to an agent with
// no channel and no key. The signed-in user's session token authorizes
// them (PROJECT:CREATE on the agent), and they run through the very
// operations a widget's sessions do (startSession, executeTool,
// reportEvents) on a virtual channel: channel id 0, which no real channel
// has, with the agent as its agent, passed to them as a channelRef. A test
// session is stored like any other with channel_id 0 and origin "console",
// which is how the sessions list tells it apart; its tool calls and events
// reach it only through its own agent's routes.

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// TestChannelID is the channel id of console test sessions.
const TestChannelID int64 = 0

// TestOrigin is the origin stored with console test sessions.
const TestOrigin = "console"

// TestSessionRoutes lists the console routes of test sessions. Tool calls
// and analytics of a test session take the session token instead of a
// widget key, on routes of their own under the agent, so that the public
// /widget/v1 routes keep taking keys only.
func (h *Handler) TestSessionRoutes() []httpx.Route {
	m := h.auth.Route
	return []httpx.Route{
		m("POST", "/api/agents/{agent_id}/test-session", h.createTestSession),
		m("POST", "/api/agents/{agent_id}/test-session/tools/execute", h.executeTestTool),
		m("POST", "/api/agents/{agent_id}/test-session/analytics", h.reportTestEvents),
	}
}

// testChannel authorizes PROJECT:CREATE on the path's agent and returns
// the virtual channel its test sessions run on. The channel goes to the
// operations as a parameter: they build its view per request, since
// TestChannelID is the same for every agent (see Handler.viewOf).
func (h *Handler) testChannel(r *http.Request) (channelRef, error) {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return channelRef{}, err
	}
	return channelRef{key: agentline.WidgetKey{ProjectID: projectID, ChannelID: TestChannelID}, testAgent: agentID}, nil
}

func (h *Handler) createTestSession(w http.ResponseWriter, r *http.Request) error {
	ch, err := h.testChannel(r)
	if err != nil {
		return err
	}
	agentID := ch.testAgent
	// ?version=n tests version n, a draft or an older one; without it the
	// latest.
	if ch.testVersion, err = agentline.ParseVersion("version", r.URL.Query().Get("version")); err != nil {
		return err
	}
	// The body is what the SDK posts to /widget/v1/session; the path names
	// the agent, and a test always starts fresh.
	var in sessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.AgentID != 0 && in.AgentID != agentID {
		return agentline.Invalid("agent_id", "agent_id must be the agent of the path, %d, or left out", agentID)
	}
	if in.SessionID != "" {
		return agentline.Invalid("session_id", "a test session starts fresh: leave session_id out")
	}
	started, err := h.startSession(r.Context(), ch, sessionRequest{AgentID: agentID, Origin: TestOrigin, Modality: in.Modality})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, started.answer())
	return nil
}

// executeTestTool is POST /widget/v1/tools/execute for a test session of
// the path's agent.
func (h *Handler) executeTestTool(w http.ResponseWriter, r *http.Request) error {
	ch, err := h.testChannel(r)
	if err != nil {
		return err
	}
	return h.executeTool(w, r, ch)
}

// reportTestEvents is POST /widget/v1/analytics for a test session.
func (h *Handler) reportTestEvents(w http.ResponseWriter, r *http.Request) error {
	ch, err := h.testChannel(r)
	if err != nil {
		return err
	}
	return h.reportEvents(w, r, ch)
}
