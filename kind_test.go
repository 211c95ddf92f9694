package agentline_test

import (
	"testing"

	"github.com/agentline/agentline"
)

// Kinds are domain words; their nouns are the words error messages have
// always used ("phone number not found").
func TestKindNoun(t *testing.T) {
	for k, want := range map[agentline.Kind]string{
		agentline.KindAgent: "agent", agentline.KindTool: "agent tool", agentline.KindKnowledgeDocument: "knowledge document",
		agentline.KindChannel: "channel", agentline.KindLead: "lead", agentline.KindPhoneNumber: "phone number",
		agentline.KindCall: "call", agentline.KindWebhook: "webhook endpoint", agentline.KindInvite: "invite",
		agentline.KindCampaign: "campaign",
	} {
		if got := k.Noun(); got != want {
			t.Errorf("%s.Noun() = %q, want %q", k, got, want)
		}
	}
}
