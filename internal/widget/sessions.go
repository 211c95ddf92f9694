package widget

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/httpx"
)

// sessionAnswer is the answer of POST /widget/v1/session. client_secret and
// ephemeral_token carry the same provider token.
type sessionAnswer struct {
	SessionID      string             `json:"session_id"`
	AgentID        int64              `json:"agent_id"`
	Provider       agentline.Provider `json:"provider"`
	Model          string             `json:"model"`
	Modality       string             `json:"modality"`
	ClientSecret   string             `json:"client_secret"`
	EphemeralToken string             `json:"ephemeral_token"`
	ExpiresAt      time.Time          `json:"expires_at"`
	Connect        struct {
		URL      string `json:"url"`
		Protocol string `json:"protocol"`
	} `json:"connect"`
}

// sessionBody is what the SDK posts to start a session: to
// /widget/v1/session, and from the console's Test panel to the agent's
// test-session route.
type sessionBody struct {
	AgentID   int64  `json:"agent_id"`
	SessionID string `json:"session_id"`
	Modality  string `json:"modality"`
}

// createSession serves POST /widget/v1/session; public checked the key.
func (h *Handler) createSession(w http.ResponseWriter, r *http.Request, ch channelRef) error {
	var in sessionBody
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	started, err := h.startSession(r.Context(), ch, sessionRequest{AgentID: in.AgentID, SessionID: in.SessionID, Origin: r.Header.Get("Origin"), Modality: in.Modality})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, started.answer())
	return nil
}

// answer is what POST /widget/v1/session (and the console's test session)
// answers: the session and the provider token the browser opens it with.
func (st startedSession) answer() sessionAnswer {
	s, tok := st.Session, st.Token
	out := sessionAnswer{SessionID: s.ID, AgentID: s.AgentID, Provider: s.Provider, Model: s.Model, Modality: string(st.Modality),
		ClientSecret: tok.Value, EphemeralToken: tok.Value, ExpiresAt: tok.ExpiresAt}
	out.Connect.URL, out.Connect.Protocol = tok.URL, tok.Protocol
	return out
}

// sessionOfChannel loads a session of channel ch; a session of any other
// channel is not found, and so is, on a console test's virtual channel, a
// test session of another agent.
func (h *Handler) sessionOfChannel(ctx context.Context, ch channelRef, id string) (agentline.WidgetSession, error) {
	if id == "" {
		return agentline.WidgetSession{}, agentline.Invalid("session_id", "session_id is required")
	}
	if len(id) > 100 {
		return agentline.WidgetSession{}, agentline.NotFound("session")
	}
	s, err := h.store.WidgetSession(ctx, ch.key.ProjectID, id)
	if err != nil {
		return s, err
	}
	if s.ChannelID != ch.key.ChannelID || (ch.testAgent != 0 && s.AgentID != ch.testAgent) {
		return agentline.WidgetSession{}, agentline.NotFound("session")
	}
	return s, nil
}

func (h *Handler) executeTool(w http.ResponseWriter, r *http.Request, ch channelRef) error {
	var in struct {
		SessionID string          `json:"session_id"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if h.tools == nil {
		return agentline.Errorf(agentline.ENotConfigured, "tools are not available on this server")
	}
	if in.CallID == "" || len(in.CallID) > 200 {
		return agentline.Invalid("call_id", "call_id is required: the provider's id of the tool call")
	}
	if in.Name == "" || len(in.Name) > 200 {
		return agentline.Invalid("name", "name is required: the tool's name")
	}
	args, err := toolArguments(in.Arguments)
	if err != nil {
		return err
	}
	s, err := h.sessionOfChannel(r.Context(), ch, in.SessionID)
	if err != nil {
		return err
	}
	agent, err := h.store.Agent(r.Context(), ch.key.ProjectID, s.AgentID)
	if err != nil {
		return err
	}
	call := agentline.ToolCall{CallID: in.CallID, Name: in.Name, Arguments: args}
	began := time.Now()
	res, err := h.tools.Execute(r.Context(), agent, call)
	if err != nil {
		return err
	}
	res.CallID = in.CallID
	data, _ := json.Marshal(map[string]any{"call_id": call.CallID, "name": call.Name, "arguments": call.Arguments,
		"output": res.Output, "is_error": res.IsError, "source": "server", "duration_ms": time.Since(began).Milliseconds()})
	if err := h.store.AddSessionEvents(r.Context(), ch.key.ProjectID, s.ID, []agentline.SessionEvent{
		{Type: agentline.EventToolCall, At: h.now().UTC(), Data: data}}, conversation.Ended); err != nil {
		httpx.Logger(r.Context()).Warn("record tool call", "session_id", s.ID, "err", err)
	}
	httpx.WriteJSON(w, http.StatusOK, res)
	return nil
}

// toolArguments accepts the arguments as a JSON object, or as a string
// holding one (OpenAI sends them so), or absent (no arguments).
func toolArguments(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, agentline.Invalid("arguments", "arguments must be a JSON object or a string holding one")
		}
		raw = json.RawMessage(strings.TrimSpace(s))
		if len(raw) == 0 {
			return json.RawMessage(`{}`), nil
		}
	}
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return nil, agentline.Invalid("arguments", "arguments must be a JSON object or a string holding one")
	}
	return raw, nil
}

// eventHeartbeat is reported every 30 s by a live client: the session is
// still on. The store keeps its time as the session's last event (the idle
// sweep ends sessions that stop reporting) without storing it as an event;
// the answer tells a client whose session is gone.
const eventHeartbeat = agentline.EventHeartbeat

// maxEventsPerBatch and maxEventData bound one analytics report.
const (
	maxEventsPerBatch = 100
	maxEventData      = 16 << 10
)

func (h *Handler) reportEvents(w http.ResponseWriter, r *http.Request, ch channelRef) error {
	var in struct {
		SessionID string `json:"session_id"`
		Events    []struct {
			Type string          `json:"type"`
			At   *time.Time      `json:"at"`
			Data json.RawMessage `json:"data"`
		} `json:"events"`
	}
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	if len(in.Events) == 0 {
		return agentline.Invalid("events", "events is required: a list of at least one event")
	}
	if len(in.Events) > maxEventsPerBatch {
		return &agentline.Error{Code: agentline.ETooLarge, Field: "events",
			Message: "a batch holds at most 100 events; send the rest in another request"}
	}
	now := h.now().UTC()
	events := make([]agentline.SessionEvent, 0, len(in.Events))
	for i, e := range in.Events {
		ev, err := checkEvent(i, e.Type, e.At, e.Data, now)
		if err != nil {
			return err
		}
		events = append(events, ev)
	}
	s, err := h.sessionOfChannel(r.Context(), ch, in.SessionID)
	if err != nil {
		return err
	}
	if len(events) > 0 {
		if err := h.store.AddSessionEvents(r.Context(), ch.key.ProjectID, s.ID, events, conversation.Ended); err != nil {
			return err
		}
		h.observeLatencies(events)
	}
	httpx.WriteJSON(w, http.StatusAccepted, map[string]int{"accepted": len(in.Events)})
	return nil
}

// checkEvent validates one reported event; the error names it by index.
func checkEvent(i int, typ string, at *time.Time, data json.RawMessage, now time.Time) (agentline.SessionEvent, error) {
	field := func(name string) string { return "events[" + strconv.Itoa(i) + "]" + name }
	ev := agentline.SessionEvent{Type: typ, At: now, Data: json.RawMessage(`{}`)}
	switch typ {
	case agentline.EventSessionStarted, agentline.EventSessionEnded, agentline.EventTranscript, agentline.EventToolCall, agentline.EventError, eventHeartbeat:
	case agentline.EventTurnLatency:
		return turnLatencyEvent(ev, at, data, now, field)
	case "":
		return ev, agentline.Invalid(field(".type"), "type is required")
	default:
		return ev, agentline.Invalid(field(".type"), "unknown event type %q: use session_started, session_ended, transcript, tool_call, error, turn_latency or heartbeat", typ)
	}
	if at != nil {
		if at.After(now.Add(5*time.Minute)) || at.Before(now.Add(-24*time.Hour)) {
			return ev, agentline.Invalid(field(".at"), "at must be within the last 24 hours")
		}
		ev.At = at.UTC()
	}
	data = bytes.TrimSpace(data)
	if len(data) > maxEventData {
		return ev, agentline.Invalid(field(".data"), "data is larger than %d bytes", maxEventData)
	}
	if len(data) > 0 && string(data) != "null" {
		var obj map[string]json.RawMessage
		if data[0] != '{' || json.Unmarshal(data, &obj) != nil {
			return ev, agentline.Invalid(field(".data"), "data must be a JSON object")
		}
		ev.Data = data
	}
	if typ == agentline.EventTranscript {
		var t struct {
			Role string `json:"role"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(ev.Data, &t); err != nil || (t.Role != "user" && t.Role != "assistant") {
			return ev, agentline.Invalid(field(".data.role"), "a transcript event needs data.role user or assistant")
		}
		if t.Text == "" {
			return ev, agentline.Invalid(field(".data.text"), "a transcript event needs data.text")
		}
	}
	return ev, nil
}

// turnLatencyEvent checks a turn_latency report strictly: data is exactly
// {"latency_ms": n} with n a whole number of ms in [0, 60000], and at, if
// given, within the last 24 hours. The stored data is rebuilt from n, so
// nothing else the client sent is kept.
func turnLatencyEvent(ev agentline.SessionEvent, at *time.Time, data json.RawMessage, now time.Time, field func(string) string) (agentline.SessionEvent, error) {
	if at != nil {
		if at.After(now.Add(5*time.Minute)) || at.Before(now.Add(-24*time.Hour)) {
			return ev, agentline.Invalid(field(".at"), "at must be within the last 24 hours")
		}
		ev.At = at.UTC()
	}
	var d map[string]json.RawMessage
	if len(data) > 256 || json.Unmarshal(data, &d) != nil || len(d) != 1 || d["latency_ms"] == nil {
		return ev, agentline.Invalid(field(".data"), `a turn_latency event's data is {"latency_ms": n}`)
	}
	ms, err := strconv.ParseInt(string(d["latency_ms"]), 10, 64)
	if err != nil || ms < 0 || ms > agentline.MaxTurnLatency.Milliseconds() {
		return ev, agentline.Invalid(field(".data.latency_ms"), "latency_ms must be a whole number of milliseconds from 0 to %d", agentline.MaxTurnLatency.Milliseconds())
	}
	ev.Data = strconv.AppendInt([]byte(`{"latency_ms":`), ms, 10)
	ev.Data = append(ev.Data, '}')
	return ev, nil
}

// observeLatencies feeds the stored turn_latency reports to the histogram.
func (h *Handler) observeLatencies(events []agentline.SessionEvent) {
	for _, e := range events {
		if e.Type == agentline.EventTurnLatency {
			var d struct {
				LatencyMS int64 `json:"latency_ms"`
			}
			json.Unmarshal(e.Data, &d)
			h.turnLatency.Observe(float64(d.LatencyMS) / 1000)
		}
	}
}
