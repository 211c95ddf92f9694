package sandbox

import (
	"net/http"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// models answers GET /v1/models, the request a provider key is checked
// with when a project saves its provider account: the sandbox's own key
// passes, like a real provider's valid one.
func models(w http.ResponseWriter, r *http.Request) error {
	if r.Header.Get("Authorization") != "Bearer "+APIKey {
		return agentline.Errorf(agentline.EUnauthorized, "the sandbox takes the API key %s", APIKey)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"object": "list",
		"data": []map[string]any{{"id": "gpt-realtime", "object": "model", "owned_by": "sandbox"}}})
	return nil
}
