package telephony

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/livecall"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// testCallStarted is the answer to POST /api/agents/{agent_id}/test-calls:
// what the browser needs to speak the carrier's side of the call.
type testCallStarted struct {
	CallSID        string    `json:"call_sid"`
	ConversationID string    `json:"conversation_id"`
	StreamURL      string    `json:"stream_url"`
	Token          string    `json:"token"`
	ExpiresAt      time.Time `json:"expires_at"`
}

// neverConnected is the end reason of a test call whose browser never
// opened its stream before the token expired.
const neverConnected = "never_connected"

// POST /api/agents/{agent_id}/test-calls: a call to the agent from the
// console's browser, which speaks the carrier's media stream protocol to
// the same stream handler and relay a real call uses; no number is needed
// and no carrier takes part. It is a create (PROJECT:CREATE), like an
// outbound call and a console test session: it opens a billed model
// session. The answer holds a one-time stream token bound to the agent,
// this call and the signed-in user, good for a minute, and the stream's
// path with the token in its query: the stream handler admits an unsigned
// upgrade with that token, and only with a test call's token.
func (h *Handler) createTestCall(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	user, _ := auth.UserFrom(r.Context())
	// ?version=n calls version n, a draft or an older one; without it the
	// latest.
	version, err := agentline.ParseVersion("version", r.URL.Query().Get("version"))
	if err != nil {
		return err
	}
	started, err := h.startTestCall(r.Context(), projectID, agentID, version, user)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, started)
	return nil
}

// startTestCall records a queued test call of the agent (under the
// project's cap on live calls, which test calls count against) from the
// user, and mints its stream token.
func (h *Handler) startTestCall(ctx context.Context, projectID, agentID int64, version int, user agentline.User) (testCallStarted, error) {
	if h.calls.Draining() {
		return testCallStarted{}, errDraining
	}
	agent, err := h.store.AgentAtVersion(ctx, projectID, agentID, version)
	if err != nil {
		return testCallStarted{}, err
	}
	if err := livecall.CheckAgent(agent); err != nil {
		return testCallStarted{}, err
	}
	// A test call needs its agent's model: the project's own provider
	// account's or the deployment's.
	if err := h.live.CheckConfigured(ctx, agent); err != nil {
		return testCallStarted{}, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return testCallStarted{}, err
	}
	sid := "CA" + hex.EncodeToString(b[:])
	call, err := h.store.ReserveCall(ctx, agentline.Call{
		ProjectID: projectID, AgentID: agentID, CallSID: sid, Direction: agentline.CallTest,
		From: user.Email, Status: agentline.CallQueued, AgentVersion: agent.Running,
	}, h.maxCalls)
	if err != nil {
		return testCallStarted{}, err
	}
	expires := h.now().Add(streamtoken.TestTTL)
	token := streamtoken.SignClaims(h.secret, streamtoken.Claims{AgentID: agentID, Ref: sid, Direction: agentline.CallTest,
		Expires: expires.Unix(), UserID: user.ID})
	h.abandonUnused(projectID, sid, expires.Sub(h.now())+time.Second, httpx.Logger(ctx))
	return testCallStarted{
		CallSID: sid, ConversationID: agentline.CallConversationID(call.ID), Token: token, ExpiresAt: expires.UTC(),
		StreamURL: "/api/telephony/stream/" + strconv.FormatInt(agentID, 10) + "?test_token=" + url.QueryEscape(token),
	}, nil
}

// abandonUnused ends a test call whose stream never came, after its token
// has expired (no stream can be admitted then), so the record does not stay
// queued and count against the project's live calls. Should the instance
// stop first, the record stays queued and stops counting after the store's
// live-call window.
func (h *Handler) abandonUnused(projectID int64, sid string, after time.Duration, log *slog.Logger) {
	time.AfterFunc(after, func() { h.endUnused(projectID, sid, log) })
}

// endUnused ends the test call sid as canceled, never_connected, if it is
// still queued.
func (h *Handler) endUnused(projectID int64, sid string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call, err := h.store.Call(ctx, projectID, sid)
	if err != nil || call.Status != agentline.CallQueued {
		return
	}
	if _, err := h.store.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: sid, Status: agentline.CallCanceled, EndReason: neverConnected},
		conversation.CallChanged); err != nil {
		log.Warn("could not end a test call that never connected", "call_sid", sid, "err", err)
	}
}
