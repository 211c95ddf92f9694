package agentline

// Kind names a kind of project-owned object that has its own routes.
// Handlers addressed by an object's own id ask the store which project
// owns it (ProjectOf) and authorize the caller before loading the object
// scoped to that project. Kinds are domain words: which table holds a kind
// is the store's private business, so nothing outside it can put a table
// name, or anything else, into SQL through a kind.
type Kind string

// The kinds of project-owned objects that have their own routes.
const (
	KindAgent             Kind = "agent"
	KindTool              Kind = "tool"
	KindKnowledgeDocument Kind = "document"
	KindChannel           Kind = "channel"
	KindLead              Kind = "lead"
	KindPhoneNumber       Kind = "number"
	KindCall              Kind = "call"
	KindWebhook           Kind = "webhook"
	KindCampaign          Kind = "campaign"
	KindTestScenario      Kind = "scenario"
	KindTestRun           Kind = "test_run"
)

// nouns are the kinds whose name in messages is longer than the kind: the
// words error messages have always used ("phone number not found").
var nouns = map[Kind]string{
	KindTool:              "agent tool",
	KindKnowledgeDocument: "knowledge document",
	KindPhoneNumber:       "phone number",
	KindWebhook:           "webhook endpoint",
	KindTestScenario:      "test scenario",
	KindTestRun:           "test run",
	KindAPIKey:            "API key",
}

// Noun names one object of the kind in messages: "phone number" for
// KindPhoneNumber.
func (k Kind) Noun() string {
	if n, ok := nouns[k]; ok {
		return n
	}
	return string(k)
}
