package analysis

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentline/agentline"
)

// instructions is the system prompt of an analysis: what to answer, from
// the agent's settings. The agent's own instructions are quoted (cut
// short) so the analyst knows what the agent was there to do.
func instructions(a agentline.Agent) string {
	var b strings.Builder
	b.WriteString("You analyse a finished conversation between a user (a website visitor or a caller) and an AI voice agent. ")
	b.WriteString("Answer only with JSON that matches the given schema, in the language of the conversation.\n")
	if a.Analysis.Summary {
		b.WriteString("- summary: two or three sentences: what the user wanted, what the agent did, how it ended.\n")
	}
	if a.Analysis.SuccessCriteria != "" {
		b.WriteString("- success: true only if the conversation meets these success criteria; success_reason: one sentence why.\n")
		fmt.Fprintf(&b, "Success criteria:\n<<<\n%s\n>>>\n", a.Analysis.SuccessCriteria)
	}
	if len(a.Analysis.DataSchema) > 0 {
		b.WriteString("- data: the fields the schema names, taken from the conversation; when the conversation does not say, " +
			"use an empty string, 0, false or an empty list.\n")
	}
	if a.Instructions != "" {
		fmt.Fprintf(&b, "The agent was instructed:\n<<<\n%s\n>>>\n", truncateRunes(a.Instructions, 4000))
	}
	return b.String()
}

// maxTranscript bounds the transcript sent (in runes); a longer one keeps
// its start and its end.
const maxTranscript = 60_000

// transcript is the conversation as text: one line per utterance with its
// offset from the start, "User" or "Agent", and the tool calls made.
func transcript(c agentline.Conversation) string {
	var b strings.Builder
	kind := map[string]string{agentline.ConversationPhone: "phone call", agentline.ConversationLiveChat: "live chat"}[c.Kind]
	if kind == "" {
		kind = "website conversation"
	}
	writeVariables(&b, c.Variables)
	fmt.Fprintf(&b, "Transcript of a %s (%s):\n", kind, c.StartedAt.UTC().Format("2006-01-02 15:04 UTC"))
	for _, l := range c.Transcript {
		who := "Agent"
		if l.Speaker == "user" {
			who = "User"
		}
		off := max(l.At.Sub(c.StartedAt), 0)
		fmt.Fprintf(&b, "[%02d:%02d] %s: %s\n", int(off.Minutes()), int(off.Seconds())%60, who, strings.TrimSpace(l.Text))
	}
	for _, t := range c.ToolCalls {
		fmt.Fprintf(&b, "(tool %s called with %s; error: %t)\n", t.Name, truncateRunes(string(t.Arguments), 500), t.IsError)
	}
	r := []rune(b.String())
	if len(r) > maxTranscript {
		return string(r[:maxTranscript/2]) + "\n[...]\n" + string(r[len(r)-maxTranscript/2:])
	}
	return string(r)
}

// writeVariables writes a campaign call's variables, when it has any, as
// a "Call variables" section: the contact's data the call was placed with,
// which filled the {{name}} placeholders of the agent's instructions (the
// analyst reads those as written), so that a summary can name the person
// and success criteria can refer to what the call was about. They come
// first, where a long transcript's cut never reaches. Names are sorted, so
// one call gives one prompt.
func writeVariables(b *strings.Builder, vars map[string]string) {
	if len(vars) == 0 {
		return
	}
	b.WriteString("Call variables (the contact's data this call was placed with; they filled the {{name}} placeholders of the agent's instructions):\n")
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(b, "- %s: %s\n", name, strings.ReplaceAll(truncateRunes(vars[name], 1000), "\n", " "))
	}
	b.WriteString("\n")
}
