package form

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// maxExportRows bounds one CSV export; narrow it with from/to beyond that.
const maxExportRows = 100_000

// leadFilter reads the project of a leads list or export, which needs
// PROJECT:VIEW, and its filters.
func (h *Handler) leadFilter(r *http.Request) (int64, agentline.SessionFilter, error) {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return 0, agentline.SessionFilter{}, err
	}
	f, err := listing.Filter(r.URL.Query())
	return projectID, f, err
}

func (h *Handler) listLeads(w http.ResponseWriter, r *http.Request) error {
	projectID, f, err := h.leadFilter(r)
	if err != nil {
		return err
	}
	f.Limit++ // one more than asked tells whether there is a next page
	list, err := h.store.Leads(r.Context(), projectID, f)
	if err != nil {
		return err
	}
	cursor := listing.PageCursor(list, f, func(l agentline.Lead) listing.Cursor {
		return listing.AfterTime(l.CreatedAt, strconv.FormatInt(l.ID, 10))
	})
	list, next := listing.Page(list, f)
	httpx.WriteJSON(w, http.StatusOK, struct {
		Leads      []agentline.Lead `json:"leads"`
		NextCursor *string          `json:"next_cursor"`
		NextOffset *int             `json:"next_offset"` // deprecated
	}{list, cursor, next})
	return nil
}

// leadView is a lead with its conversation, when it has one.
type leadView struct {
	agentline.Lead
	Session *agentline.SessionView `json:"session"`
}

func (h *Handler) getLead(w http.ResponseWriter, r *http.Request) error {
	id, projectID, err := h.auth.AuthorizePath(r, "lead_id", agentline.KindLead, agentline.PermView)
	if err != nil {
		return err
	}
	l, err := h.store.Lead(r.Context(), projectID, id)
	if err != nil {
		return err
	}
	out := leadView{Lead: l}
	if l.SessionID != nil {
		list, err := h.store.WidgetSessions(r.Context(), projectID, agentline.SessionFilter{ID: *l.SessionID, Limit: 1})
		if err != nil {
			return err
		}
		if len(list) == 1 {
			v := agentline.NewSessionView(list[0])
			out.Session = &v
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) deleteLead(w http.ResponseWriter, r *http.Request) error {
	return h.auth.DeletePath(w, r, "lead_id", agentline.KindLead, h.store.DeleteLead)
}

// listNotifyAttempts serves GET /api/channels/{channel_id}/notify-attempts
// (PROJECT:VIEW): the latest tries at POSTing the channel's leads to its
// notify_url, newest first (limit, default 50; cursor), for the console to
// show failing deliveries.
func (h *Handler) listNotifyAttempts(w http.ResponseWriter, r *http.Request) error {
	channelID, projectID, err := h.auth.AuthorizePath(r, "channel_id", agentline.KindChannel, agentline.PermView)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := listing.Limit(q, 50, listing.MaxPageSize)
	if err != nil {
		return err
	}
	before, err := listing.IntCursor(q)
	if err != nil {
		return err
	}
	list, err := h.store.NotifyAttempts(r.Context(), projectID, channelID, before, limit+1)
	if err != nil {
		return err
	}
	page, next := listing.Next(list, limit, func(a agentline.NotifyAttempt) listing.Cursor { return listing.After(a.ID) })
	if page == nil {
		page = []agentline.NotifyAttempt{}
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Attempts   []agentline.NotifyAttempt `json:"attempts"`
		NextCursor *string                   `json:"next_cursor"`
	}{page, next})
	return nil
}

// exportLeads serves GET /api/projects/{project_id}/leads.csv: every lead
// matching the filters (channel_id, agent_id, from, to), newest first, with
// a column per field name seen.
func (h *Handler) exportLeads(w http.ResponseWriter, r *http.Request) error {
	projectID, f, err := h.leadFilter(r)
	if err != nil {
		return err
	}
	var all []agentline.Lead
	const batch = 1000
	for f.Offset, f.Limit = 0, batch; ; f.Offset += batch {
		list, err := h.store.Leads(r.Context(), projectID, f)
		if err != nil {
			return err
		}
		all = append(all, list...)
		if len(all) > maxExportRows {
			return &agentline.Error{Code: agentline.ETooLarge, Message: fmt.Sprintf("more than %d leads match; narrow the export with from and to", maxExportRows)}
		}
		if len(list) < batch {
			break
		}
	}
	seen := map[string]bool{}
	var fields []string
	for _, l := range all {
		for name := range l.Answers {
			if !seen[name] {
				seen[name] = true
				fields = append(fields, name)
			}
		}
	}
	sort.Strings(fields)
	cw := httpx.NewCSV(w, fmt.Sprintf("leads-project-%d.csv", projectID))
	cw.Write(append([]string{"id", "created_at", "channel_id", "mode", "session_id"}, fields...))
	row := make([]string, 5+len(fields))
	for _, l := range all {
		row[0] = strconv.FormatInt(l.ID, 10)
		row[1] = l.CreatedAt.UTC().Format(time.RFC3339)
		row[2] = strconv.FormatInt(l.ChannelID, 10)
		row[3] = string(l.Mode)
		row[4] = ""
		if l.SessionID != nil {
			row[4] = *l.SessionID
		}
		for i, name := range fields {
			row[5+i] = answerText(l.Answers[name])
		}
		if err := cw.Write(row); err != nil {
			return nil // the client went away; nothing more to answer
		}
	}
	if err := cw.Flush(); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		httpx.Logger(r.Context()).Warn("leads export cut short", "project_id", projectID, "err", err)
	}
	return nil
}

// answerText renders one answer as a cell's text; httpx.CSV neutralizes
// what a spreadsheet would run as a formula.
func answerText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}
