// Package audit serves the audit log: a project's, to its owners, and the
// instance's own (sign-ins, accounts, administration), to instance
// administrators; as JSON pages or CSV. The entries are written by the
// store in the transaction of each change (and by AppendAudit for events
// that change nothing); nothing here, or anywhere, updates or deletes
// one, but the retention prune (Pruner).
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Store is what the audit log's routes read.
type Store interface {
	AuditLog(ctx context.Context, f agentline.AuditFilter) ([]agentline.AuditEntry, error)
}

// Handler serves the audit log's routes.
type Handler struct {
	store Store
	auth  *auth.Service
}

// NewHandler returns the audit log's handler.
func NewHandler(s Store, a *auth.Service) *Handler { return &Handler{store: s, auth: a} }

// Routes lists the audit log's routes: each as a page of JSON, and as the
// whole log (filtered) in CSV, like every export.
func (h *Handler) Routes() []httpx.Route {
	r := h.auth.Route
	return []httpx.Route{
		r("GET", "/api/projects/{project_id}/audit-log", h.projectLog),
		r("GET", "/api/projects/{project_id}/audit-log.csv", h.projectCSV),
		r("GET", "/api/admin/audit-log", h.instanceLog),
		r("GET", "/api/admin/audit-log.csv", h.instanceCSV),
	}
}

// maxExportRows bounds one CSV export; a longer log is exported in date
// ranges (from, to).
const maxExportRows = 100_000

func (h *Handler) projectLog(w http.ResponseWriter, r *http.Request) error {
	projectID, err := h.auth.AuthorizeMembers(r, "read the audit log")
	if err != nil {
		return err
	}
	return h.page(w, r, projectID)
}

func (h *Handler) projectCSV(w http.ResponseWriter, r *http.Request) error {
	projectID, err := h.auth.AuthorizeMembers(r, "export the audit log")
	if err != nil {
		return err
	}
	return h.export(w, r, projectID, fmt.Sprintf("audit-log-project-%d.csv", projectID))
}

func (h *Handler) instanceLog(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	return h.page(w, r, 0)
}

func (h *Handler) instanceCSV(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdmin(r); err != nil {
		return err
	}
	return h.export(w, r, 0, "audit-log-instance.csv")
}

// requireAdmin refuses whoever is no instance administrator.
func requireAdmin(r *http.Request) error {
	_, err := auth.RequireAdmin(r.Context())
	if agentline.ErrorCode(err) == agentline.EForbidden {
		return agentline.Errorf(agentline.EForbidden, "only instance administrators read the instance's audit log")
	}
	return err
}

// page answers one page of the log, newest first, with the cursor of the
// next (older) page.
func (h *Handler) page(w http.ResponseWriter, r *http.Request, projectID int64) error {
	q := r.URL.Query()
	f, err := Filter(q, projectID)
	if err != nil {
		return err
	}
	limit, before, err := listing.IntPage(q)
	if err != nil {
		return err
	}
	f.Before, f.Limit = before, limit+1
	list, err := h.store.AuditLog(r.Context(), f)
	if err != nil {
		return err
	}
	list, next := listing.Next(list, limit, func(e agentline.AuditEntry) listing.Cursor { return listing.After(e.ID) })
	httpx.WriteJSON(w, http.StatusOK, struct {
		Entries    []agentline.AuditEntry `json:"entries"`
		NextCursor *string                `json:"next_cursor"`
	}{list, next})
	return nil
}

// export answers every entry the filters pick as CSV, newest first.
func (h *Handler) export(w http.ResponseWriter, r *http.Request, projectID int64, filename string) error {
	f, err := Filter(r.URL.Query(), projectID)
	if err != nil {
		return err
	}
	f.Limit = maxExportRows + 1
	list, err := h.store.AuditLog(r.Context(), f)
	if err != nil {
		return err
	}
	if len(list) > maxExportRows {
		return &agentline.Error{Code: agentline.ETooLarge, Message: fmt.Sprintf("more than %d entries match; narrow the export with from and to", maxExportRows)}
	}
	cw := httpx.NewCSV(w, filename)
	cw.Write([]string{"id", "at", "actor_kind", "actor_id", "actor", "action", "resource_kind", "resource_id", "project_id", "changes", "client_ip", "request_id"})
	for _, e := range list {
		cw.Write(row(e))
	}
	return cw.Flush()
}

// row is an entry as a CSV record; changes stay JSON in one cell.
func row(e agentline.AuditEntry) []string {
	actor := e.Actor.Email
	if e.Actor.Kind == agentline.ActorAPIKey {
		actor = e.Actor.KeyPrefix
	}
	var changes string
	if len(e.Changes) > 0 {
		b, _ := json.Marshal(e.Changes) // decoded from JSON: encodes again
		changes = string(b)
	}
	project, id := "", ""
	if e.ProjectID > 0 {
		project = strconv.FormatInt(e.ProjectID, 10)
	}
	if e.Actor.ID > 0 {
		id = strconv.FormatInt(e.Actor.ID, 10)
	}
	return []string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format(time.RFC3339), string(e.Actor.Kind), id, actor, e.Action,
		e.Resource.Kind, e.Resource.ID, project, changes, e.ClientIP, e.RequestID}
}

// maxFilterLen bounds a text filter: no action, kind, email or id is
// longer.
const maxFilterLen = 320

// Filter reads the log's filters from a query: actor_kind (user, api_key
// or system), actor_id, actor (an email or a key prefix), action,
// resource_kind, resource_id, from and to (RFC 3339 times or dates).
func Filter(q url.Values, projectID int64) (agentline.AuditFilter, error) {
	f := agentline.AuditFilter{ProjectID: projectID, ActorKind: agentline.ActorKind(q.Get("actor_kind")),
		ActorLabel: q.Get("actor"), Action: q.Get("action"), ResourceKind: q.Get("resource_kind"), ResourceID: q.Get("resource_id")}
	switch f.ActorKind {
	case "", agentline.ActorUser, agentline.ActorAPIKey, agentline.ActorSystem:
	default:
		return f, agentline.Invalid("actor_kind", "actor_kind must be user, api_key or system")
	}
	for name, v := range map[string]string{"actor": f.ActorLabel, "action": f.Action, "resource_kind": f.ResourceKind, "resource_id": f.ResourceID} {
		if len(v) > maxFilterLen {
			return f, agentline.Invalid(name, "%s must be at most %d characters", name, maxFilterLen)
		}
	}
	var err error
	if f.ActorID, err = listing.ID(q.Get("actor_id"), "actor_id"); err != nil {
		return f, err
	}
	if f.From, err = listing.Time(q.Get("from"), "from"); err != nil {
		return f, err
	}
	if f.To, err = listing.Time(q.Get("to"), "to"); err != nil {
		return f, err
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return f, agentline.Invalid("to", "to must be after from")
	}
	return f, nil
}
