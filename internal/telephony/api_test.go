package telephony_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentline/agentline"
)

func TestTelephonyDisabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"TELEPHONY_ENABLED": "false"})
	routes := []struct{ method, path string }{
		{"GET", fmt.Sprintf("/api/projects/%d/telephony/numbers/available", e.project)},
		{"GET", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project)},
		{"POST", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project)},
		{"PATCH", fmt.Sprintf("/api/projects/%d/telephony/numbers/1", e.project)},
		{"DELETE", fmt.Sprintf("/api/projects/%d/telephony/numbers/1", e.project)},
		{"POST", fmt.Sprintf("/api/agents/%d/telephony/outbound", e.ada)},
		{"DELETE", fmt.Sprintf("/api/agents/%d/telephony/calls/CA1", e.ada)},
		{"GET", fmt.Sprintf("/api/projects/%d/telephony/calls", e.project)},
		{"GET", "/api/calls/CA1"},
		{"POST", "/api/telephony/status"},
	}
	for _, r := range routes {
		res := e.do(e.owner, r.method, r.path, `{}`)
		if res.status != 404 || res.errorCode() != "not_found" || !strings.Contains(string(res.body), "telephony is disabled") {
			t.Errorf("%s %s = %d %s", r.method, r.path, res.status, res.body)
		}
	}
	if len(e.fake.Requests()) != 0 {
		t.Fatalf("the carrier was called: %v", e.fake.Requests())
	}
}

func TestNotConfigured(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"TWILIO_ACCOUNT_SID": "", "TWILIO_AUTH_TOKEN": ""})
	e.run([]check{
		{name: "no carrier account", token: e.owner, method: "GET", path: fmt.Sprintf("/api/projects/%d/telephony/numbers/available", e.project), status: 503, code: "not_configured", has: "TWILIO_ACCOUNT_SID"},
		{name: "no carrier account, buying", token: e.owner, method: "POST", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), body: map[string]any{"phone_number": "+14155550100", "agent_id": e.ada}, status: 503, code: "not_configured"},
		{name: "reads still work", token: e.owner, method: "GET", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), status: 200},
	})
	e2 := newEnv(t, map[string]string{"BOT_HOST": ""})
	e2.run([]check{
		{name: "no BOT_HOST", token: e2.owner, method: "POST", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e2.project), body: map[string]any{"phone_number": "+14155550100", "agent_id": e2.ada}, status: 503, code: "not_configured", has: "BOT_HOST"},
	})
	if len(e2.fake.Numbers()) != 0 {
		t.Fatal("bought a number without BOT_HOST")
	}
}

// Every route of the phone channel is described in docs/openapi.yaml.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	e := newEnvNoUsers(t)
	doc := string(agentline.OpenAPI())
	for _, r := range e.Routes() {
		if !strings.Contains(r, "telephony") && !strings.HasPrefix(r, "GET /api/calls/") {
			continue
		}
		method, pattern, _ := strings.Cut(r, " ")
		i := strings.Index(doc, "\n  "+pattern+":\n")
		if i < 0 {
			t.Errorf("%s is not in docs/openapi.yaml", pattern)
			continue
		}
		rest := doc[i+len(pattern)+4:]
		if end := strings.Index(rest, "\n  /"); end >= 0 {
			rest = rest[:end]
		}
		if !strings.Contains(rest, "\n    "+strings.ToLower(method)+":") {
			t.Errorf("%s %s is not in docs/openapi.yaml", method, pattern)
		}
	}
}
