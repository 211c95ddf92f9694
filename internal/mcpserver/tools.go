package mcpserver

// tool is one MCP tool and the management API operation it stands for.
// Its input schema is built from that operation in the API's OpenAPI
// document (schema.go), and a call is that request, served in process
// (call.go): the API's validation, authorization and behaviour are the
// tool's.
type tool struct {
	name, title, description string
	method, path             string
}

// tools are agentline's MCP tools: what a coding assistant needs to build
// an agent, put it on a site and check how it does. None manages people,
// keys or provider accounts, which keys never may.
var tools = []tool{
	{"list_agents", "List agents", "The agents of the key's project, oldest first (viewer).",
		"GET", "/api/projects/{project_id}/agents"},
	{"get_agent", "Get an agent", "One agent with its settings: instructions, greeting, model, voice, language, analysis, version (viewer).",
		"GET", "/api/agents/{agent_id}"},
	{"create_agent", "Create an agent", "Make an agent in the key's project; only name is required (editor).",
		"POST", "/api/projects/{project_id}/agents"},
	{"update_agent", "Update an agent", "Change an agent's settings; fields left out keep their value. A change makes a new version, published unless the agent reviews before publishing (editor).",
		"PATCH", "/api/agents/{agent_id}"},
	{"list_tools", "List an agent's tools", "The webhook and MCP tools the agent's model may call (viewer).",
		"GET", "/api/agents/{agent_id}/tools"},
	{"list_knowledge_documents", "List knowledge documents", "The agent's knowledge documents, which its search_knowledge_base tool searches (viewer).",
		"GET", "/api/agents/{agent_id}/knowledge"},
	{"list_channels", "List channels", "The project's channels: voice widgets and forms (viewer).",
		"GET", "/api/projects/{project_id}/channels"},
	{"create_channel", "Create a channel", "Make a channel in the key's project: type voice_widget puts agent_id's agent on a website; then create_channel_key for its public key (editor).",
		"POST", "/api/projects/{project_id}/channels"},
	{"create_channel_key", "Create a channel's widget key", "Create (or rotate) the channel's public widget key with its allowed origins and rate limits. The answer holds the whole key this once: it is never shown again (editor).",
		"POST", "/api/channels/{channel_id}/key"},
	{"get_channel_snippets", "Get a channel's embed snippets", "The script tag and iframe that put the channel on a page (viewer).",
		"GET", "/api/channels/{channel_id}/snippets"},
	{"list_conversations", "List conversations", "The project's conversations (widget sessions, live chats, phone calls), newest first, with filters (viewer).",
		"GET", "/api/projects/{project_id}/conversations"},
	{"get_conversation", "Get a conversation", "One conversation whole: transcript, tool calls, analysis, lead (viewer).",
		"GET", "/api/conversations/{conversation_id}"},
	{"list_test_scenarios", "List test scenarios", "The agent's test scenarios, which a test run plays (viewer).",
		"GET", "/api/agents/{agent_id}/scenarios"},
	{"create_test_scenario", "Create a test scenario", "A simulated person, their goal and the criteria that judge the agent (editor).",
		"POST", "/api/agents/{agent_id}/scenarios"},
	{"start_test_run", "Start a test run", "Play the agent's scenarios (all, or scenario_ids) as durable jobs; read the results with get_test_run (editor).",
		"POST", "/api/agents/{agent_id}/test-runs"},
	{"list_test_runs", "List test runs", "The agent's test runs, without their results (viewer).",
		"GET", "/api/agents/{agent_id}/test-runs"},
	{"get_test_run", "Get a test run", "One test run with its results: verdicts, reasons, transcripts, tool calls, and its comparison with the previous run (viewer).",
		"GET", "/api/test-runs/{run_id}"},
}

// keyProject is the path parameter the key fills: a key acts in its one
// project, so no tool asks for it.
const keyProject = "project_id"
