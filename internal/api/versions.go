package api

// Agent versions: every save that changes an agent's conversational
// settings is kept as a numbered version (the store makes it). Reading
// them takes PROJECT:VIEW; publishing one, which changes what every
// channel, number and campaign of the agent runs, takes PROJECT:CREATE,
// like editing the agent. Rolling back is publishing an older version.

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// versionDiff is a comparison of version From (the query's diff) with the
// path's version To: each field that differs, with both values.
type versionDiff struct {
	From    int                     `json:"from"`
	To      int                     `json:"to"`
	Changes []agentline.FieldChange `json:"changes"`
}

func (h *Handler) listVersions(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermView)
	if err != nil {
		return err
	}
	limit, before, err := listing.IntPage(r.URL.Query())
	if err != nil {
		return err
	}
	if before > 1<<30 {
		return agentline.Invalid("cursor", "cursor is not one this API gave out: pass next_cursor as it is")
	}
	list, err := h.store.AgentVersions(r.Context(), projectID, agentID, int(before), limit+1)
	if err != nil {
		return err
	}
	list, next := listing.Next(list, limit, func(v agentline.AgentVersion) listing.Cursor { return listing.After(int64(v.Version)) })
	httpx.WriteJSON(w, http.StatusOK, struct {
		Versions   []agentline.AgentVersion `json:"versions"`
		NextCursor *string                  `json:"next_cursor"`
	}{list, next})
	return nil
}

// getVersion answers one version; with ?diff=m, also how it differs from
// version m, field by field.
func (h *Handler) getVersion(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermView)
	if err != nil {
		return err
	}
	n, err := pathVersion(r)
	if err != nil {
		return err
	}
	var from int
	if d, ok := r.URL.Query()["diff"]; ok {
		if from, err = agentline.ParseVersion("diff", d[0]); err != nil || from == 0 {
			return agentline.Invalid("diff", "diff must be the number of the version to compare with")
		}
	}
	v, err := h.store.AgentVersion(r.Context(), projectID, agentID, n)
	if err != nil {
		return err
	}
	out := struct {
		agentline.AgentVersion
		Diff *versionDiff `json:"diff,omitempty"`
	}{AgentVersion: v}
	if from != 0 {
		old, err := h.store.AgentVersion(r.Context(), projectID, agentID, from)
		if err != nil {
			return err
		}
		changes, err := old.Settings.Diff(v.Settings)
		if err != nil {
			return err
		}
		out.Diff = &versionDiff{From: from, To: n, Changes: changes}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// publishVersion makes the path's version the one the agent's
// conversations run, and answers the agent.
func (h *Handler) publishVersion(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	n, err := pathVersion(r)
	if err != nil {
		return err
	}
	a, err := h.store.PublishAgentVersion(r.Context(), projectID, agentID, n)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, a)
	return nil
}

// pathVersion reads the path's version number: not a number is a bad
// request.
func pathVersion(r *http.Request) (int, error) {
	n, err := agentline.ParseVersion("n", r.PathValue("n"))
	if err == nil && n == 0 {
		err = agentline.Invalid("n", "n must be a version number: a positive integer")
	}
	return n, err
}
