package analysis

import (
	"encoding/json"
	"strings"

	"github.com/agentline/agentline"
)

// The sandbox's rules for test scenarios (docs/testing.md lists them), so
// that a run's outcome is known in advance with no key:
//
//   - The simulated person's first message is its goal (its {{name}}
//     placeholders filled from the scenario's variables); its second is
//     "Thank you, that is all."; then it ends the conversation.
//   - The judge fails a scenario whose goal contains "fail" (any case),
//     and one in which the agent never answered; it passes every other.
const (
	SandboxThanks = "Thank you, that is all."
	sandboxFail   = "fail"
)

// sandboxScenario answers a scenario's turn (no schema) or its verdict.
func sandboxScenario(r Request) (string, error) {
	s := r.Scenario
	if r.Schema == nil {
		said := 0
		for _, l := range r.Lines {
			if l.Speaker == "user" {
				said++
			}
		}
		switch said {
		case 0:
			return agentline.FillVariables(s.Goal, s.Variables), nil
		case 1:
			return SandboxThanks, nil
		}
		return EndMarker, nil
	}
	answered := false
	for _, l := range r.Lines {
		answered = answered || (l.Speaker != "user" && strings.TrimSpace(l.Text) != "")
	}
	verdict := map[string]any{"success": true,
		"success_reason": `Sandbox rule: the agent answered and the goal does not contain "fail".`}
	switch {
	case strings.Contains(strings.ToLower(s.Goal), sandboxFail):
		verdict = map[string]any{"success": false, "success_reason": `Sandbox rule: the scenario's goal contains "fail".`}
	case !answered:
		verdict = map[string]any{"success": false, "success_reason": "Sandbox rule: the agent never answered."}
	}
	b, err := json.Marshal(verdict)
	return string(b), err
}
