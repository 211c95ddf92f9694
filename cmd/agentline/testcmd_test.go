package main

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// `agentline test` against a sandbox server: a run whose scenarios all
// pass succeeds (exit 0); one with the scenario whose goal contains "fail"
// prints its reason and fails (exit 1); each outcome is printed as it
// lands.
func TestTestCommandGatesOnTheRun(t *testing.T) {
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+strconv.FormatInt(p.ID, 10)+"/agents", tok, map[string]string{"name": "Ada"}, &a)
	for _, sc := range []map[string]any{
		{"name": "hours", "persona": "A visitor", "goal": "Ask the opening hours", "success_criteria": "The agent answers."},
		{"name": "refund", "persona": "A customer", "goal": "Ask for a refund that must fail", "success_criteria": "The agent refuses."},
	} {
		s.Must(t, 201, "POST", "/api/agents/"+strconv.FormatInt(a.ID, 10)+"/scenarios", tok, sc, nil)
	}
	env := map[string]string{"AGENTLINE_TOKEN": tok}
	out, err := runCmd(t, env, "test", "--server", s.URL, "--agent", strconv.FormatInt(a.ID, 10), "--scenario", "hours", "--poll", "50ms")
	if err != nil || !strings.Contains(out, "PASS  hours (2 turns, 0 tool calls)") || !strings.Contains(out, "1 passed, 0 failed, 0 errors") {
		t.Fatalf("a passing run: %v\n%s", err, out)
	}
	out, err = runCmd(t, env, "test", "--server", s.URL, "--agent", strconv.FormatInt(a.ID, 10), "--version", "1", "--poll", "50ms")
	if !errors.Is(err, errTestsFailed) || !strings.Contains(out, `FAIL  refund (2 turns, 0 tool calls): Sandbox rule: the scenario's goal contains "fail".`) ||
		!strings.Contains(out, "1 passed, 1 failed, 0 errors") {
		t.Fatalf("a failing run: %v\n%s", err, out)
	}
	if _, err := runCmd(t, env, "test", "--server", s.URL, "--agent", strconv.FormatInt(a.ID, 10), "--version", "9"); err == nil || !strings.Contains(err.Error(), "agent version not found") {
		t.Fatalf("an unknown version: %v", err)
	}
	if _, err := runCmd(t, env, "test", "--server", s.URL, "--agent", strconv.FormatInt(a.ID, 10), "--scenario", "nope"); err == nil || !strings.Contains(err.Error(), `no scenario named "nope"`) {
		t.Fatalf("an unknown scenario: %v", err)
	}
	if _, err := runCmd(t, nil, "test", "--server", s.URL, "--agent", strconv.FormatInt(a.ID, 10)); err == nil || !strings.Contains(err.Error(), "AGENTLINE_TOKEN") {
		t.Fatalf("no token: %v", err)
	}
}
