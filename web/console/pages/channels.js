// @ts-check
// The channels list and a channel's page: its settings with a preview of
// the widget, a form channel's form and notify deliveries, the key, the
// snippets to paste, and delete.

import { createChannel, deleteChannel, getChannel, getKey, listAgents, listChannels, updateChannel } from "../api.js";
import { h, table, confirmAction, alertError } from "../dom.js";
import { agentOptions, form, values } from "../forms.js";
import { can, project } from "../router.js";
import { forget, shown } from "../secrets.js";
import { formSettings } from "./form-channel.js";
import { notifyCard } from "./webhooks.js";
import { keyCard, keySlot, snippetsCard } from "./widget.js";

/** @import {PageContext} from "../router.js" */
/** @import {Agent, Channel, ChannelSettings} from "../types.js" */

/** @param {PageContext} ctx */
export async function channelsPage({ show }) {
  const pid = project().id;
  const [channels, agents] = await Promise.all([listChannels(pid), listAgents(pid)]);
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const rows = channels.map((c) => h("tr", {}, h("td", {}, h("a", { href: `#/channels/${c.id}` }, c.name || `Channel ${c.id}`)),
    h("td", {}, c.type === "form" ? "Form" : "Voice widget"), h("td", {}, (c.agent_id && names.get(c.agent_id)) || "")));
  show("Channels",
    table(["Name", "Type", "Agent"], rows, "No channels yet."),
    !can("create") ? null : h("div", { class: "card" }, h("h2", {}, "New channel"), agents.length ? form([
      { name: "type", label: "Type", type: "select", options: [["voice_widget", "Voice widget"], ["form", "Web form"]] },
      { name: "name", label: "Name", placeholder: "Website", required: true },
      { name: "agent_id", label: "Agent", type: "select", options: agentOptions(agents, "No agent (lead capture forms)"), value: String(agents[0].id) },
    ], "Create channel", async (v) => {
      v.agent_id = v.agent_id ? Number(v.agent_id) : null;
      const c = await createChannel(pid, v);
      location.hash = `#/channels/${c.id}`;
    }) : h("p", {}, "Create an agent first: ", h("a", { href: "#/agents" }, "Agents"), ".")));
}

/** @param {PageContext} ctx @param {string} id */
export async function channelPage(ctx, id) {
  const pid = project().id;
  const [c, agents] = await Promise.all([getChannel(id), listAgents(pid)]);
  // null for a channel without a key (the route answers it, not a 404).
  const key = await getKey(id);
  // A key just made stays on screen until dismissed (secrets.js), while it
  // is still the channel's key; a reload of the tab shows only its prefix.
  let whole = shown(keySlot(c.id));
  if (whole && !(key && whole.startsWith(key.prefix))) {
    forget(keySlot(c.id));
    whole = undefined;
  }
  // A lead capture form needs no key and shows no widget: its page posts
  // without one.
  const leadCapture = c.type === "form" && c.settings.form?.mode === "lead_capture";
  const settings = settingsForm(c, agents, leadCapture);
  const preview = widgetPreview(c);
  if (!leadCapture) {
    settings.addEventListener("input", () => preview.update(values(settings).settings));
    settings.addEventListener("change", () => preview.update(values(settings).settings));
  }
  const parts = [
    leadCapture ? h("div", { class: "card" }, h("h2", {}, "Channel"), settings)
      : h("div", { class: "cols" }, h("div", { class: "card" }, h("h2", {}, "Look"), settings), h("div", { class: "card" }, h("h2", {}, "Preview"), preview.el)),
    c.type === "form" ? formSettings(c) : null,
    c.type === "form" ? await notifyCard(c) : null,
    leadCapture ? null : keyCard(c, key, whole),
    await snippetsCard(c, whole),
    can("delete") ? h("div", { class: "card" }, h("h2", {}, "Danger zone"), deleteButton(c)) : null,
  ];
  ctx.show(c.name || `Channel ${c.id}`, h("p", { class: "muted" }, c.type === "form" ? "Web form channel" : "Voice widget channel"), parts);
}

/** settingsForm edits the channel's name, agent and (a widget's) look. @param {Channel} c @param {Agent[]} agents @param {boolean} leadCapture */
function settingsForm(c, agents, leadCapture) {
  const saved = h("p", { role: "status", class: "muted" });
  const settings = form([
    { name: "name", label: "Name", value: c.name, required: true },
    { name: "agent_id", label: "Agent", type: "select", options: agentOptions(agents, c.type === "form" ? "No agent" : null), value: c.agent_id ? String(c.agent_id) : "" },
    ...(leadCapture ? [] : [
      { name: "settings.color", label: "Color", type: "color", value: c.settings.color },
      { name: "settings.position", label: "Position", type: "select", options: /** @type {[string, string][]} */ ([["bottom-right", "Bottom right"], ["bottom-left", "Bottom left"]]), value: c.settings.position },
      { name: "settings.show_transcript", label: "Show the transcript", type: "checkbox", value: c.settings.show_transcript },
      { name: "settings.show_text_chat", label: "Show text chat", type: "checkbox", value: c.settings.show_text_chat },
    ]),
  ], "Save settings", async (v) => {
    v.agent_id = v.agent_id ? Number(v.agent_id) : null;
    Object.assign(c, await updateChannel(c.id, v));
    saved.textContent = "Saved.";
  }, { label: "Channel settings", need: "create" });
  settings.append(saved);
  return settings;
}

/** deleteButton deletes the channel, after asking. @param {Channel} c */
function deleteButton(c) {
  const del = h("button", { type: "button", class: "danger" }, "Delete channel");
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete the channel ${c.name}? Its key stops working at once.`, "Delete channel"))) return;
    await deleteChannel(c.id).catch((e) => alertError(e));
    forget(keySlot(c.id));
    location.hash = "#/channels";
  });
  return del;
}

/**
 * widgetPreview draws the widget as a visitor sees it, updated as the
 * settings change.
 * @param {Channel} c
 */
function widgetPreview(c) {
  const p = project();
  const title = (p.branding && p.branding.display_name) || p.name;
  const head = h("div", { class: "pv-head" }, title);
  const lines = h("div", {}, h("div", { class: "pv-line" }, "Agent: Hello! How can I help?"), h("div", { class: "pv-line" }, "You: Where is my order?"));
  // A drawing, not a control: a button inside role=img would be a control
  // nested in an image (axe's nested-interactive).
  const talk = h("span", { class: "pv-talk" }, "Talk");
  const text = h("div", { class: "pv-text" }, h("span", {}, "Type a message"));
  const panel = h("div", { class: "pv-panel" }, head, h("div", { class: "pv-body" }, lines, talk, text));
  const launcher = h("div", { class: "pv-launcher" });
  const el = h("div", { class: "preview", role: "img", "aria-label": "Preview of the widget" }, panel, launcher);
  const update = (/** @type {ChannelSettings} */ st) => {
    for (const x of [head, talk, launcher]) x.style.background = st.color;
    const side = st.position === "bottom-left" ? "left" : "right";
    panel.className = "pv-panel " + side;
    launcher.className = "pv-launcher " + side;
    lines.hidden = !st.show_transcript;
    text.hidden = !st.show_text_chat;
  };
  update(c.settings);
  return { el, update };
}
