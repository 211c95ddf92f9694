package app_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// mcpTypeScriptClient drives agentline's /mcp with the official
// TypeScript SDK (@modelcontextprotocol/sdk, pinned in .ci/run): it
// connects with an editor key, lists the tools, creates an agent, a
// widget channel and its key, starts a visitor's widget session with that
// key and reads the conversation; then a viewer key and another project's
// key try what they may not, and a session token tries to connect. It
// prints what it saw as one JSON object.
const mcpTypeScriptClient = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const base = process.env.AGENTLINE_URL;
async function connect(key) {
  const client = new Client({ name: "agentline-ts-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(base + "/mcp"),
    { requestInit: { headers: { Authorization: "Bearer " + key } } });
  await client.connect(transport);
  return client;
}
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  return { isError: !!res.isError, body: JSON.parse(res.content[0].text), structured: res.structuredContent };
}
const seen = {};
const editor = await connect(process.env.EDITOR_KEY);
const { tools } = await editor.listTools();
seen.tools = tools.map((t) => t.name).sort();
seen.createAgentSchema = tools.find((t) => t.name === "create_agent").inputSchema;
const agent = await call(editor, "create_agent", { name: "Ada", instructions: "Help with orders." });
seen.agent = agent;
const channel = await call(editor, "create_channel", { type: "voice_widget", name: "Site", agent_id: agent.body.id });
seen.channel = channel;
const key = await call(editor, "create_channel_key", { channel_id: channel.body.id });
seen.widgetKeyPrefix = key.body.prefix;
seen.widgetKeyWhole = typeof key.body.key === "string" && key.body.key.startsWith(key.body.prefix);
const session = await fetch(base + "/widget/v1/session", { method: "POST",
  headers: { "X-API-Key": key.body.key, "Content-Type": "application/json" }, body: JSON.stringify({ agent_id: agent.body.id }) });
seen.sessionStatus = session.status;
const list = await call(editor, "list_conversations", { agent_id: agent.body.id });
seen.listed = list.body.conversations.map((c) => c.id);
seen.conversation = await call(editor, "get_conversation", { conversation_id: list.body.conversations[0].id });

const viewer = await connect(process.env.VIEWER_KEY);
seen.viewerGet = await call(viewer, "get_agent", { agent_id: agent.body.id });
seen.viewerCreate = await call(viewer, "create_agent", { name: "Bo" });
seen.viewerUpdate = await call(viewer, "update_agent", { agent_id: agent.body.id, name: "Bo" });
seen.viewerChannel = await call(viewer, "create_channel", { type: "voice_widget", name: "Mine", agent_id: agent.body.id });

const other = await connect(process.env.OTHER_KEY);
seen.otherGet = await call(other, "get_agent", { agent_id: agent.body.id });
seen.otherConversation = await call(other, "get_conversation", { conversation_id: list.body.conversations[0].id });
seen.otherList = await call(other, "list_agents", {});

try {
  await connect(process.env.SESSION_TOKEN);
  seen.sessionToken = "connected";
} catch (e) {
  seen.sessionToken = "status " + e.code + ": " + String(e);
}
await Promise.all([editor.close(), viewer.close(), other.close()]);
console.log(JSON.stringify(seen));
`

// toolCall is a tool's answer as the TypeScript client saw it.
type toolCall struct {
	IsError bool           `json:"isError"`
	Body    map[string]any `json:"body"`
}

func (c toolCall) code() string {
	e, _ := c.Body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// The official TypeScript client connects to /mcp with an API key, lists
// the tools, creates an agent and a channel (its key shown whole), and
// reads the conversation a visitor's session made; a viewer key reads but
// is refused creating and changing, another project's key finds this
// project's agent and conversation missing, and a session token cannot
// connect.
func TestMCPServerWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "@modelcontextprotocol/sdk")
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_NODE") == "1" {
			t.Fatal("AGENTLINE_REQUIRE_NODE=1 but node is not on PATH")
		}
		t.Skip("node is not on PATH; AGENTLINE_REQUIRE_NODE=1 makes this a failure")
	}
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	var shop, other agentline.Project
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &shop)
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Elsewhere"}, &other)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--input-type=module", "-e", mcpTypeScriptClient)
	// Bare imports resolve from the directory that holds node_modules.
	cmd.Dir = filepath.Dir(nm)
	cmd.Env = append(os.Environ(), "AGENTLINE_URL="+s.URL, "SESSION_TOKEN="+tok,
		"EDITOR_KEY="+newKey(t, s, tok, shop.ID, agentline.RoleEditor).Key,
		"VIEWER_KEY="+newKey(t, s, tok, shop.ID, agentline.RoleViewer).Key,
		"OTHER_KEY="+newKey(t, s, tok, other.ID, agentline.RoleOwner).Key)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	var seen struct {
		Tools             []string       `json:"tools"`
		CreateAgentSchema map[string]any `json:"createAgentSchema"`
		Agent, Channel    toolCall
		WidgetKeyPrefix   string   `json:"widgetKeyPrefix"`
		WidgetKeyWhole    bool     `json:"widgetKeyWhole"`
		SessionStatus     int      `json:"sessionStatus"`
		Listed            []string `json:"listed"`
		Conversation      toolCall
		ViewerGet         toolCall `json:"viewerGet"`
		ViewerCreate      toolCall `json:"viewerCreate"`
		ViewerUpdate      toolCall `json:"viewerUpdate"`
		ViewerChannel     toolCall `json:"viewerChannel"`
		OtherGet          toolCall `json:"otherGet"`
		OtherConversation toolCall `json:"otherConversation"`
		OtherList         toolCall `json:"otherList"`
		SessionToken      string   `json:"sessionToken"`
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	if !slices.Equal(seen.Tools, slices.Sorted(maps.Keys(mcpOperations))) {
		t.Errorf("tools %v", seen.Tools)
	}
	if props, _ := seen.CreateAgentSchema["properties"].(map[string]any); props["name"] == nil || props["instructions"] == nil {
		t.Errorf("create_agent schema %v", seen.CreateAgentSchema)
	}
	agentID := id(seen.Agent.Body["id"])
	if seen.Agent.IsError || id(seen.Agent.Body["project_id"]) != shop.ID || seen.Channel.IsError || id(seen.Channel.Body["agent_id"]) != agentID {
		t.Errorf("agent %+v, channel %+v", seen.Agent, seen.Channel)
	}
	if !strings.HasPrefix(seen.WidgetKeyPrefix, "svc_pk_") || !seen.WidgetKeyWhole || seen.SessionStatus != 201 {
		t.Errorf("widget key %q whole %v, session %d", seen.WidgetKeyPrefix, seen.WidgetKeyWhole, seen.SessionStatus)
	}
	if len(seen.Listed) != 1 || seen.Conversation.IsError || seen.Conversation.Body["id"] != seen.Listed[0] || id(seen.Conversation.Body["agent_id"]) != agentID {
		t.Errorf("listed %v, conversation %+v", seen.Listed, seen.Conversation)
	}
	if seen.ViewerGet.IsError || seen.ViewerGet.Body["name"] != "Ada" {
		t.Errorf("viewer's get_agent %+v", seen.ViewerGet)
	}
	for what, c := range map[string]toolCall{"create_agent": seen.ViewerCreate, "update_agent": seen.ViewerUpdate, "create_channel": seen.ViewerChannel} {
		if !c.IsError || c.code() != agentline.EForbidden {
			t.Errorf("viewer's %s %+v, want forbidden", what, c)
		}
	}
	for what, c := range map[string]toolCall{"get_agent": seen.OtherGet, "get_conversation": seen.OtherConversation} {
		if !c.IsError || c.code() != agentline.ENotFound || strings.Contains(string(mustMarshal(c.Body)), "Ada") {
			t.Errorf("other project's %s %+v, want not_found", what, c)
		}
	}
	if items, _ := seen.OtherList.Body["items"].([]any); seen.OtherList.IsError || len(items) != 0 {
		t.Errorf("other project's list_agents %+v", seen.OtherList)
	}
	if !strings.HasPrefix(seen.SessionToken, "status 401: ") || !strings.Contains(seen.SessionToken, "takes a project's API key") {
		t.Errorf("a session token connecting: %s", seen.SessionToken)
	}
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
