// @ts-check
// The agents list with the project's first steps, and an agent's page: its
// tabs Settings, Versions, Test, Tools, Knowledge, Tests and (with telephony) Phone.

import { createAgent, getAgent, getCatalog, getKey, listAgents, listChannels, listNumbers, listProviderAccounts, listWebhooks } from "../api.js";
import { h, table } from "../dom.js";
import { form } from "../forms.js";
import { can, features, project } from "../router.js";
import { agentSettings } from "./agent-settings.js";
import { agentPhone } from "./phone.js";
import { agentTest } from "./test-panel.js";
import { agentKnowledge, agentTools } from "./tools.js";
import { agentTests } from "./tests.js";
import { agentVersions } from "./versions.js";

/** @import {PageContext} from "../router.js" */
/** @import {Agent} from "../types.js" */

/** modelList suggests the catalog's models in the new agent's model field. */
async function modelList() {
  const cat = await getCatalog();
  return h("datalist", { id: "models" }, cat.models.map((m) => h("option", { value: m.name })));
}

/**
 * checklist is the project's first steps with their live state, each
 * linked to where it is done.
 * @param {Agent[]} agents
 */
async function checklist(agents) {
  const pid = project().id, f = features();
  const channels = await listChannels(pid);
  // A key that answered a request from its site (last_used_at) means the
  // snippet runs on a real page.
  const keys = await Promise.all(channels.slice(0, 20).map((c) => getKey(c.id).catch(() => null)));
  const numbers = f.telephony_enabled ? await listNumbers(pid).catch(() => []) : [];
  const endpoints = await listWebhooks(pid).then((r) => r.webhooks, () => []);
  const accounts = await listProviderAccounts(pid).catch(() => []);
  const widget = channels.find((c) => c.type === "voice_widget") || channels[0];
  /** @type {[boolean, string, string | null, string?][]} */
  const items = [
    [f.openai_configured || f.gemini_configured || accounts.length > 0, f.sandbox ? "A provider: the sandbox, a pretend one; add this project's provider account (or set OPENAI_API_KEY or GEMINI_API_KEY) for a real model"
      : "A provider: this project's provider account, or OPENAI_API_KEY or GEMINI_API_KEY on the server", "#/projects", "Add one"],
    [agents.length > 0, "An agent", agents.length ? `#/agents/${agents[0].id}/test` : "#/agents", agents.length ? "Try it" : "Create one"],
    [channels.length > 0, "A channel: a website widget or a web form", channels.length ? `#/channels/${channels[0].id}` : "#/channels", channels.length ? "Open" : "Create one"],
    [keys.some((k) => k && k.last_used_at), "The snippet seen on a real site", widget ? `#/channels/${widget.id}` : "#/channels", "Snippets"],
  ];
  if (f.telephony_enabled) {
    items.push([numbers.length > 0, "A phone number", agents.length ? `#/agents/${agents[0].id}/phone` : "#/agents", "Buy one"]);
  }
  // The webhooks section is the console's #/webhooks page.
  items.push([endpoints.some((e) => e.enabled), "A webhook endpoint: your systems hear of each conversation", "#/webhooks", endpoints.length ? "Webhooks" : "Add one"]);
  const done = items.filter(([ok]) => ok).length;
  return h("section", { class: "card", "aria-labelledby": "checklist-title" },
    h("h2", { id: "checklist-title" }, `Get started: ${done} of ${items.length} done`),
    h("ul", { class: "checklist" }, items.map(([ok, text, href, link]) => h("li", { class: ok ? "done" : "" },
      h("span", { class: "mark" }, ok ? "Done" : "To do"), h("span", {}, text, href ? [" · ", h("a", { href }, link)] : null)))));
}

/** @param {PageContext} ctx */
export async function agentsPage({ show }) {
  const pid = project().id;
  const agents = await listAgents(pid);
  const rows = agents.map((a) => h("tr", {},
    h("td", {}, h("a", { href: `#/agents/${a.id}` }, a.name)), h("td", {}, a.model), h("td", {}, a.voice), h("td", {}, a.language)));
  show("Agents", await checklist(agents),
    table(["Name", "Model", "Voice", "Language"], rows, "No agents yet: create one below."),
    !can("create") ? null : h("div", { class: "card", id: "new-agent" }, h("h2", {}, "New agent"), await modelList(), form([
      { name: "name", label: "Name", required: true },
      { name: "model", label: "Model", value: "gpt-realtime", list: "models", hint: "gpt-realtime* (OpenAI-compatible) or gemini-*live* / *native-audio* (Gemini-compatible)." },
      { name: "instructions", label: "Instructions", type: "textarea", hint: "The system prompt." },
    ], "Create agent", async (v) => {
      const a = await createAgent(pid, v);
      location.hash = `#/agents/${a.id}`;
    })));
}

/** @type {Record<string, (ctx: PageContext, a: Agent) => Promise<Node>>} */
const tabPages = { settings: agentSettings, versions: agentVersions, test: agentTest, tools: agentTools, knowledge: agentKnowledge, tests: agentTests, phone: agentPhone };

/** agentPage is an agent's page, on one of its tabs. @param {PageContext} ctx @param {string} id @param {string} [tab] */
export async function agentPage(ctx, id, tab = "settings") {
  const agent = await getAgent(id);
  /** @type {[string, string][]} */
  const tabs = [["settings", "Settings"], ["versions", "Versions"], ["test", "Test"], ["tools", "Tools"], ["knowledge", "Knowledge"], ["tests", "Tests"]];
  if (features().telephony_enabled) tabs.push(["phone", "Phone"]);
  const nav = h("nav", { class: "tabs", "aria-label": "Agent" }, tabs.map(([t, l]) =>
    h("a", { href: `#/agents/${id}/${t}`, "aria-current": t === tab ? "page" : null }, l)));
  const body = await tabPages[tab](ctx, agent);
  ctx.show(agent.name, nav, body);
}
