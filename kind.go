package agentline

import "strings"

// Kind names a table whose rows belong to a project (it has id and
// project_id columns). Handlers addressed by an object's own id ask the
// store which project owns it (ProjectOf) and authorize the caller before
// loading the object scoped to that project. Only the constants below are
// ever passed.
type Kind string

// The kinds of project-owned objects that have their own routes.
const (
	KindAgent             Kind = "agents"
	KindTool              Kind = "agent_tools"
	KindKnowledgeDocument Kind = "knowledge_documents"
	KindChannel           Kind = "channels"
	KindLead              Kind = "leads"
	KindPhoneNumber       Kind = "phone_numbers"
	KindCall              Kind = "calls"
	KindWebhook           Kind = "webhook_endpoints"
)

// Noun names one row of the kind in messages: "agent" for agents.
func (k Kind) Noun() string {
	return strings.TrimSuffix(strings.ReplaceAll(string(k), "_", " "), "s")
}
