package app_test

import (
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
)

// In the sandbox with no GEMINI_API_KEY, the deployment's Gemini key is
// the sandbox's, whose pretend Live socket answers phone calls only: the
// console hears that Gemini is not configured, and a Gemini agent's widget
// session is refused as not configured rather than sent to mint an auth
// token nobody serves.
func TestSandboxGeminiKeyStaysOffTheWidget(t *testing.T) {
	t.Parallel()
	w := startWidgetSite(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	var me struct {
		Features struct {
			GeminiConfigured bool `json:"gemini_configured"`
		} `json:"features"`
	}
	w.s.Must(t, 200, "GET", "/api/me", w.token, nil, &me)
	if me.Features.GeminiConfigured {
		t.Error("the console hears Gemini is configured with the sandbox's key alone")
	}
	w.s.Must(t, 200, "PATCH", "/api/agents/"+itoa(w.agent.ID), w.token, map[string]any{"model": "gemini-2.5-flash-native-audio-preview-09-2025"}, nil)
	if r := w.do(t, "POST", "/widget/v1/session", map[string]any{"agent_id": w.agent.ID}); r.Status != 503 || r.ErrorCode() != agentline.ENotConfigured {
		t.Fatalf("a Gemini agent's widget session in the sandbox: %s", r)
	}
}
