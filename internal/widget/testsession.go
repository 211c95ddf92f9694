package widget

// Console test sessions: the agent page's Test panel talks to an agent with
// no channel and no key. The signed-in user's session token authorizes
// them (PROJECT:CREATE on the agent), and they run through the very
// operations a widget's sessions do (startSession, executeTool,
// reportEvents) on a virtual channel: channel id 0, which no real channel
// has, with the agent as its agent. A test session is stored like any
// other with channel_id 0 and origin "console", which is how the sessions
// list tells it apart.

import (
	"context"
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

// consoleTest is the virtual channel of one test session request.
type consoleTest struct{ projectID, agentID int64 }

type consoleTestKey struct{}

// testKey authorizes PROJECT:CREATE on the path's agent and returns the
// context and the virtual key its test sessions run under.
func (h *Handler) testKey(r *http.Request) (context.Context, agentline.WidgetKey, int64, error) {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return nil, agentline.WidgetKey{}, 0, err
	}
	ctx := context.WithValue(r.Context(), consoleTestKey{}, consoleTest{projectID: projectID, agentID: agentID})
	return ctx, agentline.WidgetKey{ProjectID: projectID, ChannelID: TestChannelID}, agentID, nil
}

func (h *Handler) createTestSession(w http.ResponseWriter, r *http.Request) error {
	ctx, key, agentID, err := h.testKey(r)
	if err != nil {
		return err
	}
	// The body is what the SDK posts to /widget/v1/session; the path names
	// the agent, and a test always starts fresh.
	var in struct {
		AgentID   int64  `json:"agent_id"`
		SessionID string `json:"session_id"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if in.AgentID != 0 && in.AgentID != agentID {
		return agentline.Invalid("agent_id", "agent_id must be the agent of the path, %d, or left out", agentID)
	}
	if in.SessionID != "" {
		return agentline.Invalid("session_id", "a test session starts fresh: leave session_id out")
	}
	started, err := h.startSession(ctx, key, sessionRequest{AgentID: agentID, Origin: TestOrigin})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, started.answer())
	return nil
}

// executeTestTool is POST /widget/v1/tools/execute for a test session of
// the agent's project.
func (h *Handler) executeTestTool(w http.ResponseWriter, r *http.Request) error {
	ctx, key, _, err := h.testKey(r)
	if err != nil {
		return err
	}
	return h.executeTool(w, r.WithContext(ctx), key)
}

// reportTestEvents is POST /widget/v1/analytics for a test session.
func (h *Handler) reportTestEvents(w http.ResponseWriter, r *http.Request) error {
	ctx, key, _, err := h.testKey(r)
	if err != nil {
		return err
	}
	return h.reportEvents(w, r.WithContext(ctx), key)
}

// testChannels answers the store's Channel for the virtual channel of a
// console test request; every other channel comes from the store.
type testChannels struct{ Store }

func (s testChannels) Channel(ctx context.Context, projectID, channelID int64) (agentline.Channel, error) {
	if t, ok := ctx.Value(consoleTestKey{}).(consoleTest); ok && channelID == TestChannelID && projectID == t.projectID {
		agentID := t.agentID
		return agentline.Channel{ID: TestChannelID, ProjectID: projectID, AgentID: &agentID,
			Type: agentline.ChannelVoiceWidget, Name: "Console test"}, nil
	}
	return s.Store.Channel(ctx, projectID, channelID)
}
