// Package conversation owns a conversation's life on every channel: what
// follows its start and its end (life.go: its events, its analysis), run by
// the store in the transaction that started or ended it. It ends the widget
// conversations nobody is talking in any more (a recurring job, run once
// per deployment by the job queue, abandons sessions idle for longer than
// the idle timeout), and serves a project's conversations (widget
// sessions, live chats and phone calls in one shape).
package conversation

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Store is what the conversations API needs from storage.
type Store interface {
	Conversations(ctx context.Context, projectID int64, f agentline.ConversationFilter) ([]agentline.Conversation, error)
	Conversation(ctx context.Context, projectID int64, id string) (agentline.Conversation, error)
	ProjectOfConversation(ctx context.Context, id string) (int64, error)
	DeleteConversation(ctx context.Context, projectID int64, id string) error
	ConversationDeliveriesBefore(ctx context.Context, projectID int64, conversationID string, before int64, limit int) ([]agentline.ConversationDelivery, error)
}

// Handler serves the conversations API.
type Handler struct {
	store      Store
	auth       *auth.Service
	recordings Recordings // nil: no recordings are kept
}

// New returns the conversations API on store, authorized by a.
func New(store Store, a *auth.Service) *Handler { return &Handler{store: store, auth: a} }

// Routes lists the conversations API.
func (h *Handler) Routes() []httpx.Route {
	m := h.auth.Route
	return []httpx.Route{
		m("GET", "/api/projects/{project_id}/conversations", h.list),
		m("GET", "/api/conversations/{conversation_id}", h.get),
		m("DELETE", "/api/conversations/{conversation_id}", h.delete),
		m("GET", "/api/conversations/{conversation_id}/recording", h.recording),
		m("GET", "/api/conversations/{conversation_id}/deliveries", h.deliveries),
	}
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	f, err := filter(r.URL.Query())
	if err != nil {
		return err
	}
	limit := f.Limit
	f.Limit++ // one more tells whether there is a next page
	list, err := h.store.Conversations(r.Context(), projectID, f)
	if err != nil {
		return err
	}
	list, next := listing.Next(list, limit, func(c agentline.Conversation) listing.Cursor {
		return listing.AfterTime(c.StartedAt, c.ID)
	})
	httpx.WriteJSON(w, http.StatusOK, struct {
		Conversations []agentline.Conversation `json:"conversations"`
		NextCursor    *string                  `json:"next_cursor"`
	}{list, next})
	return nil
}

// conversationOf authorizes perm on the path's conversation and returns its
// project and id; another project's conversation is not found.
func (h *Handler) conversationOf(r *http.Request, perm agentline.Permission) (int64, string, error) {
	id := r.PathValue("conversation_id")
	if id == "" || len(id) > 100 {
		return 0, "", agentline.NotFound("conversation")
	}
	projectID, err := h.store.ProjectOfConversation(r.Context(), id)
	if err != nil {
		return 0, "", err
	}
	return projectID, id, h.auth.AuthorizeIn(r.Context(), "conversation", projectID, perm)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	projectID, id, err := h.conversationOf(r, agentline.PermView)
	if err != nil {
		return err
	}
	c, err := h.store.Conversation(r.Context(), projectID, id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	projectID, id, err := h.conversationOf(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	if err := h.deleteRecording(r.Context(), projectID, id); err != nil {
		return err
	}
	if err := h.store.DeleteConversation(r.Context(), projectID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// maxDeliveries bounds a page of a conversation's deliveries, and is its
// default: a handful of events (started, ended, analyzed) to each of a
// project's endpoints fit in one.
const maxDeliveries = 200

// deliveries serves the webhook deliveries of the conversation's events,
// newest first, with each endpoint's URL.
func (h *Handler) deliveries(w http.ResponseWriter, r *http.Request) error {
	projectID, id, err := h.conversationOf(r, agentline.PermView)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := listing.Limit(q, maxDeliveries, maxDeliveries)
	if err != nil {
		return err
	}
	before, err := listing.IntCursor(q)
	if err != nil {
		return err
	}
	list, err := h.store.ConversationDeliveriesBefore(r.Context(), projectID, id, before, limit+1)
	if err != nil {
		return err
	}
	list, next := listing.Next(list, limit, func(d agentline.ConversationDelivery) listing.Cursor { return listing.After(d.ID) })
	if list == nil {
		list = []agentline.ConversationDelivery{}
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Deliveries []agentline.ConversationDelivery `json:"deliveries"`
		NextCursor *string                          `json:"next_cursor"`
	}{list, next})
	return nil
}

// filter reads the listing's query: kind, agent_id, agent_version,
// channel_id, number_id, status, analysis_status, success, from, to, q, limit, cursor.
func filter(q url.Values) (agentline.ConversationFilter, error) {
	f := agentline.ConversationFilter{Kind: q.Get("kind"), Status: q.Get("status"), Query: strings.TrimSpace(q.Get("q")), Limit: listing.DefaultPageSize}
	switch f.Kind {
	case "", agentline.ConversationWidget, agentline.ConversationLiveChat, agentline.ConversationPhone:
	default:
		return f, agentline.Invalid("kind", "kind must be widget, live_chat or phone")
	}
	switch f.Status {
	case "", agentline.ConversationLive, agentline.ConversationEnded, agentline.ConversationAbandoned, agentline.ConversationFailed:
	default:
		return f, agentline.Invalid("status", "status must be live, ended, abandoned or failed")
	}
	if len(f.Query) > 200 {
		return f, agentline.Invalid("q", "q is longer than 200 characters")
	}
	if err := analysisFilter(q, &f); err != nil {
		return f, err
	}
	var err error
	for name, dst := range map[string]*int64{"agent_id": &f.AgentID, "channel_id": &f.ChannelID, "number_id": &f.NumberID} {
		if *dst, err = listing.ID(q.Get(name), name); err != nil {
			return f, err
		}
	}
	if f.AgentVersion, err = agentline.ParseVersion("agent_version", q.Get("agent_version")); err != nil {
		return f, err
	}
	if f.From, err = listing.Time(q.Get("from"), "from"); err != nil {
		return f, err
	}
	if f.To, err = listing.Time(q.Get("to"), "to"); err != nil {
		return f, err
	}
	if f.Limit, err = listing.Limit(q, listing.DefaultPageSize, listing.MaxPageSize); err != nil {
		return f, err
	}
	c, err := listing.TimeCursor(q)
	if c != nil {
		f.After = &agentline.ConversationCursor{StartedAt: c.Time, ID: c.ID}
	}
	return f, err
}

// analysisFilter reads the analysis outcome filters: analysis_status
// (pending, done, failed, skipped) and success (true or false).
func analysisFilter(q url.Values, f *agentline.ConversationFilter) error {
	switch f.AnalysisStatus = q.Get("analysis_status"); f.AnalysisStatus {
	case "", agentline.AnalysisPending, agentline.AnalysisDone, agentline.AnalysisFailed, agentline.AnalysisSkipped:
	default:
		return agentline.Invalid("analysis_status", "analysis_status must be pending, done, failed or skipped")
	}
	switch v := q.Get("success"); v {
	case "":
	case "true", "false":
		b := v == "true"
		f.Success = &b
	default:
		return agentline.Invalid("success", "success must be true or false")
	}
	return nil
}
