package agentline

import "strings"

// greetingLead starts the instructions that make a realtime model say an
// agent's greeting.
const greetingLead = "Greet the caller by saying: "

// GreetingInstructions is the response.create instruction that makes a
// realtime model open a call with the agent's greeting (the phone path's
// first words).
func GreetingInstructions(greeting string) string { return greetingLead + greeting }

// GreetingOf returns the greeting that GreetingInstructions put into
// instructions: the sandbox, which understands no prompt, says it as it
// is, so that trying an agent there sounds like the agent.
func GreetingOf(instructions string) (string, bool) {
	g, ok := strings.CutPrefix(instructions, greetingLead)
	return g, ok && strings.TrimSpace(g) != ""
}
