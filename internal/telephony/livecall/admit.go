package livecall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/relay"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
)

// startTimeout bounds the wait for the carrier's connected and start
// messages after the upgrade.
const startTimeout = 10 * time.Second

// streamStart is what the carrier's start message says about the stream.
type streamStart struct {
	StreamSID        string            `json:"streamSid"`
	CallSID          string            `json:"callSid"`
	CustomParameters map[string]string `json:"customParameters"`
}

// GET /api/telephony/stream/{agent_id}: the carrier's media stream of one
// call (a WebSocket). The start message must carry a stream token for this
// agent and call, or the socket is closed before the model is reached; then
// the call is relayed to the agent's realtime model until either side ends.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request) error {
	agentID, err := httpx.PathID(r, "agent_id")
	if err != nil {
		return err
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return agentline.Invalid("", "this is the carrier's media stream: it must be opened as a WebSocket")
	}
	// A test call from the console's browser carries its token in the URL
	// too: no carrier signs its upgrade, so the token, minted for a
	// signed-in user, must verify first, and only a test call's token does.
	test := r.URL.Query().Get("test_token")
	if test != "" {
		if err := h.checkTestToken(test, agentID); err != nil {
			httpx.Logger(r.Context()).Warn("test call stream refused", "agent_id", agentID, "err", err)
			return agentline.Errorf(agentline.EForbidden, "the test_token is not a valid test call token for this agent")
		}
	} else if err := h.signatures.CheckUpgrade(r); err != nil {
		return err
	}
	conn, err := relay.Accept(w, r, nil)
	if err != nil {
		return nil // Accept has answered the client
	}
	conn.SetReadLimit(1 << 16)
	ctx := context.WithoutCancel(r.Context())
	log := httpx.Logger(ctx).With("agent_id", agentID)
	if !h.live.enter() {
		relay.CloseSocket(conn, websocket.StatusTryAgainLater, "shutting down")
		return nil
	}
	defer h.live.leave()
	sc, err := h.admit(ctx, conn.Conn, agentID, test)
	if err != nil {
		log.Warn("media stream refused", "err", err)
		relay.CloseSocket(conn, websocket.StatusPolicyViolation, "stream refused")
		return nil
	}
	h.runCall(ctx, conn, sc, log.With("project_id", sc.call.ProjectID, "call_sid", sc.start.CallSID, "call_id", sc.call.ID))
	return nil
}

// streamCall is an admitted stream: its start message, call record and agent.
type streamCall struct {
	start   streamStart
	claims  streamtoken.Claims
	call    agentline.Call
	agent   agentline.Agent
	started time.Time
}

// admit reads the carrier's connected and start messages and admits the
// stream they describe. One timeout bounds both, so a stream that never
// says who it is, or whose record cannot be read, holds no handler long.
// test is the test call token the stream was opened with, if any.
func (h *Handler) admit(ctx context.Context, conn *websocket.Conn, agentID int64, test string) (*streamCall, error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	start, err := readStart(ctx, conn)
	if err != nil {
		return nil, err
	}
	return h.admitStream(ctx, agentID, start, test)
}

// readStart reads the carrier's messages up to its start message.
func readStart(ctx context.Context, conn *websocket.Conn) (streamStart, error) {
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			return streamStart{}, fmt.Errorf("read start: %w", err)
		}
		var m struct {
			Event string      `json:"event"`
			Start streamStart `json:"start"`
		}
		if err := json.Unmarshal(msg, &m); err != nil {
			return streamStart{}, fmt.Errorf("carrier message: %w", err)
		}
		switch m.Event {
		case "connected":
		case "start":
			return m.Start, nil
		default:
			return streamStart{}, fmt.Errorf("%q before start", m.Event)
		}
	}
}

// admitStream decides whether the stream a start message describes may
// reach the agent's model: its stream token must verify for this agent and
// match a call record of the agent that has not ended, the agent must take
// calls, and the token must not have admitted a stream before. An admitted call is recorded as in progress, whatever status
// callbacks are still on their way. Every refusal is an error for the log:
// the carrier is only told that the stream was refused.
//
// test is the test call token the stream was opened with ("" for the
// carrier's signed streams). Each kind of stream takes its own tokens only:
// an unsigned test stream the very token it was opened with, which must be
// a test call's; a carrier's stream any other.
func (h *Handler) admitStream(ctx context.Context, agentID int64, start streamStart, test string) (*streamCall, error) {
	if start.StreamSID == "" || !carrier.ValidCallSID(start.CallSID) {
		return nil, errors.New("start without streamSid or a valid callSid")
	}
	token := start.CustomParameters["stream_token"]
	claims, err := streamtoken.Verify(h.secret, token, agentID, h.now())
	if err != nil {
		return nil, err
	}
	switch {
	case test == "" && claims.Direction == agentline.CallTest:
		return nil, errors.New("a test call's token on a carrier's stream")
	case test != "" && token != test:
		return nil, errors.New("the start message's stream token is not the test call token the stream was opened with")
	}
	h.live.settle(claims.Ref)
	ref, expires := claims.Direction+":"+claims.Ref, time.Unix(claims.Expires, 0)
	// The call starts now, for its record and its recording alike, so that
	// the two last equally long.
	started := h.now()
	// The token is used last, in one transaction with the call going in
	// progress: a replay that fails another check cannot use up the token
	// of the carrier's own stream, and before the model is dialed, so a
	// replay of a live call's token costs no model session, on any
	// instance.
	admit := func(call agentline.Call, agent agentline.Agent) (agentline.CallEvent, error) {
		if err := admissible(agentID, call, agent); err != nil {
			return agentline.CallEvent{}, err
		}
		return agentline.CallEvent{CallSID: call.CallSID, Status: agentline.CallInProgress, At: started, AgentVersion: agent.Running}, nil
	}
	var call agentline.Call
	var agent agentline.Agent
	switch claims.Direction {
	case agentline.CallInbound, agentline.CallTest:
		call, agent, err = h.admitBySID(ctx, claims, start, ref, expires, admit)
	case agentline.CallOutbound:
		call, agent, err = h.admitOutbound(ctx, agentID, claims, start, ref, expires, admit)
	default:
		return nil, errors.New("stream token without a direction")
	}
	if err != nil {
		return nil, fmt.Errorf("admit stream: %w", err)
	}
	return &streamCall{start: start, claims: claims, call: call, agent: withVariables(agent, call), started: started}, nil
}

// admissible says whether a stream for the agent agentID may reach the
// call's agent: the call must be that agent's, must not have ended, and
// the agent must take calls.
func admissible(agentID int64, call agentline.Call, agent agentline.Agent) error {
	if call.AgentID != agentID {
		return errors.New("the call belongs to another agent")
	}
	if agentline.CallStatusFinal(call.Status) || call.EndReason != "" {
		// A call whose relay has ended (a transferred call stays in
		// progress) takes no second stream on the same token.
		return fmt.Errorf("the call has ended (%s %s)", call.Status, call.EndReason)
	}
	return CheckAgent(agent)
}

// admitBySID admits an inbound or a test call's stream: the call, by its
// SID, and its agent are read in the admission's transaction (a call SID
// is unique, and the call names its project and agent, which admissible
// checks).
func (h *Handler) admitBySID(ctx context.Context, claims streamtoken.Claims, start streamStart, ref string, expires time.Time,
	admit func(agentline.Call, agentline.Agent) (agentline.CallEvent, error)) (agentline.Call, agentline.Agent, error) {
	if claims.Ref != start.CallSID {
		return agentline.Call{}, agentline.Agent{}, errors.New("stream token issued for another call")
	}
	call, agent, err := h.store.AdmitCallStream(ctx, start.CallSID, ref, expires, func(call agentline.Call, agent agentline.Agent) (agentline.CallEvent, error) {
		if claims.Direction == agentline.CallTest && call.Direction != agentline.CallTest {
			return agentline.CallEvent{}, errors.New("a test call's token for a call that is not a test call")
		}
		return admit(call, agent)
	}, conversation.CallChanged)
	if errors.Is(err, agentline.ErrNotFound) {
		return call, agent, fmt.Errorf("call record: %w", err)
	}
	return call, agent, err
}

// admitOutbound admits an outbound call's stream: its record found by
// stream ref (outboundCallRecord), its agent read after, then the token's
// use and admit's event in one transaction.
func (h *Handler) admitOutbound(ctx context.Context, agentID int64, claims streamtoken.Claims, start streamStart, ref string, expires time.Time,
	admit func(agentline.Call, agentline.Agent) (agentline.CallEvent, error)) (agentline.Call, agentline.Agent, error) {
	var none agentline.Agent
	call, err := h.outboundCallRecord(ctx, agentID, claims, start)
	if err != nil {
		return call, none, err
	}
	agent, err := h.callAgent(ctx, call.ProjectID, call)
	if err != nil {
		return call, none, err
	}
	e, err := admit(call, agent)
	if err != nil {
		return call, none, err
	}
	call, err = h.store.AdmitStream(ctx, ref, expires, e, conversation.CallChanged)
	return call, agent, err
}

// outboundCallRecord finds an outbound call's record by its stream ref in
// the agent's project; the record gets the call SID here when the stream
// came before the carrier's answer to the call request.
func (h *Handler) outboundCallRecord(ctx context.Context, agentID int64, claims streamtoken.Claims, start streamStart) (agentline.Call, error) {
	if start.CustomParameters["stream_ref"] != claims.Ref {
		return agentline.Call{}, errors.New("stream_ref does not match the stream token")
	}
	projectID, err := h.store.ProjectOf(ctx, agentline.KindAgent, agentID)
	if err != nil {
		return agentline.Call{}, err
	}
	call, err := h.store.CallByStreamRef(ctx, projectID, claims.Ref)
	if err != nil || call.CallSID == start.CallSID {
		return wrapRecord(call, err)
	}
	if call.CallSID != agentline.PendingCallSID(claims.Ref) {
		return agentline.Call{}, errors.New("stream token issued for another call")
	}
	return wrapRecord(h.store.AttachCallSID(ctx, projectID, call.ID, start.CallSID, call.Status))
}

// wrapRecord says, for the log, that a store error came from reading or
// updating the call's record.
func wrapRecord(call agentline.Call, err error) (agentline.Call, error) {
	if err != nil {
		return call, fmt.Errorf("call record: %w", err)
	}
	return call, nil
}

// checkTestToken checks, before the upgrade, the token of a test call's
// stream: it must verify for the agent and be a test call's.
func (h *Handler) checkTestToken(token string, agentID int64) error {
	claims, err := streamtoken.Verify(h.secret, token, agentID, h.now())
	if err != nil {
		return err
	}
	if claims.Direction != agentline.CallTest {
		return errors.New("not a test call's token")
	}
	return nil
}

// callAgent is the agent as call runs it: the version the call records (a
// test call asked for), otherwise the published one, which the call then
// records as it is admitted.
func (h *Handler) callAgent(ctx context.Context, projectID int64, call agentline.Call) (agentline.Agent, error) {
	if call.AgentVersion != 0 {
		return h.store.AgentAtVersion(ctx, projectID, call.AgentID, call.AgentVersion)
	}
	return h.store.PublishedAgent(ctx, projectID, call.AgentID)
}
