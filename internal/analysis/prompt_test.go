package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
)

// A campaign call's variables reach the analysis as a "Call variables"
// section before the transcript, sorted by name; other conversations have
// no such section.
func TestTranscriptCallVariables(t *testing.T) {
	start := time.Date(2024, 6, 3, 14, 0, 0, 0, time.UTC)
	c := agentline.Conversation{Kind: agentline.ConversationPhone, StartedAt: start,
		Transcript: []agentline.Line{{Speaker: "agent", Text: "Hi Ada", At: start.Add(time.Second)}},
		Variables:  map[string]string{"plan": "Pro", "first_name": "Ada", "note": "two\nlines"}}
	got := transcript(c)
	want := "Call variables (the contact's data this call was placed with; they filled the {{name}} placeholders of the agent's instructions):\n" +
		"- first_name: Ada\n- note: two lines\n- plan: Pro\n\nTranscript of a phone call (2024-06-03 14:00 UTC):\n[00:01] Agent: Hi Ada\n"
	if got != want {
		t.Fatalf("transcript =\n%s\nwant\n%s", got, want)
	}
	c.Variables = nil
	if got := transcript(c); strings.Contains(got, "Call variables") {
		t.Fatalf("a conversation without variables: %s", got)
	}
}
