// @ts-check
// The conversations pages: one list of widget sessions, live chats and
// phone calls, and one conversation whole (transcript, tool calls,
// recording, analysis, lead, webhook deliveries).

import {
  deleteConversation, getConversation, listAgents, listChannels, listConversationDeliveries, listConversations, listNumbers, recording,
} from "../api.js";
import { h, s, flat, table, notice, confirmAction, plural, json, when, errorText } from "../dom.js";
import { agentOptions, filtered } from "../forms.js";
import { can, features, project } from "../router.js";
import { answerList, formFields } from "./leads.js";

/** @import {PageContext} from "../router.js" */
/** @import {Analysis, Conversation, Recording} from "../types.js" */
/** @import {Child} from "../dom.js" */

/** clock shows a duration as m:ss (h:mm:ss from an hour). @param {number | null | undefined} ms */
export function clock(ms) {
  if (ms === null || ms === undefined) return "";
  const t = Math.round(ms / 1000), hr = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), sec = String(t % 60).padStart(2, "0");
  return hr ? `${hr}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** @type {Record<string, string>} */
export const kinds = { widget: "Widget", live_chat: "Live chat", phone: "Phone call" };
/** @type {Record<string, string>} */
const statuses = { live: "Live", ended: "Ended", abandoned: "Abandoned", failed: "Failed" };

/** kindIcon draws a kind's small icon; the label next to it says the kind. @param {string} kind */
function kindIcon(kind) {
  const d = /** @type {Record<string, string>} */ ({
    widget: "M3 4h14v9H8l-4 3v-3H3z",
    live_chat: "M3 3h14v4H3zM3 9h14v4H3zM3 15h8v2H3z",
    phone: "M5 2l3 0 1 4-2 1a10 10 0 0 0 6 6l1-2 4 1v3a2 2 0 0 1-2 2A15 15 0 0 1 3 4a2 2 0 0 1 2-2z",
  })[kind] || "M4 4h12v12H4z";
  return s("svg", { class: "kind-icon", viewBox: "0 0 20 20", width: 16, height: 16, "aria-hidden": "true", focusable: "false" }, s("path", { d }));
}

/** @param {string} kind */
function kindLabel(kind) {
  return h("span", { class: "kind " + kind }, kindIcon(kind), " ", kinds[kind] || kind);
}

/** @param {string} st */
function statusBadge(st) {
  return h("span", { class: "status " + st }, statuses[st] || st);
}

/**
 * names loads what a conversation's ids point at: agents, channels and
 * (with telephony) the project's numbers.
 */
export async function names() {
  const pid = project().id;
  const [agents, channels, numbers] = await Promise.all([
    listAgents(pid), listChannels(pid),
    features().telephony_enabled ? listNumbers(pid).catch(() => []) : [],
  ]);
  return {
    agents, channels,
    agent: (/** @type {number | null | undefined} */ id) => (agents.find((a) => a.id === id) || { name: "" }).name || (id ? `agent ${id}` : ""),
    channel: (/** @type {Partial<Conversation>} */ c) => {
      if (c.channel_id) return (channels.find((x) => x.id === c.channel_id) || { name: "" }).name || `channel ${c.channel_id}`;
      if (c.kind === "phone") {
        if (c.direction === "test") return "Browser test call";
        const n = numbers.find((x) => x.id === c.number_id);
        return (n && n.phone_number) || (c.direction === "outbound" ? c.from : c.to) || "phone";
      }
      return "Console test";
    },
  };
}

/**
 * conversationsPage lists the project's conversations, newest first, with
 * filters and text search; "Load more" follows next_cursor.
 * @param {PageContext} ctx
 */
export async function conversationsPage({ show }) {
  const pid = project().id;
  const n = await names();
  const option = (/** @type {Record<string, string>} */ obj, /** @type {string} */ all) => [["", all], ...Object.entries(obj)].map(([k, v]) => /** @type {[string, string]} */ ([k, v]));
  show("Conversations", filtered([
    { name: "q", label: "Search", type: "search", placeholder: "Words said, a number, an id" },
    { name: "kind", label: "Kind", type: "select", options: option(kinds, "All kinds") },
    { name: "agent_id", label: "Agent", type: "select", options: agentOptions(n.agents, "All agents") },
    { name: "agent_version", label: "Agent version", type: "number", min: 1, hint: "With an agent: the conversations of one of its versions." },
    { name: "status", label: "Status", type: "select", options: option(statuses, "Any status") },
    { name: "from", label: "From", type: "date" }, { name: "to", label: "To (exclusive)", type: "date" },
  ], async (v) => {
    const rows = h("tbody", {});
    const more = h("button", { type: "button", hidden: true }, "Load more");
    const load = async (/** @type {string} */ cursor) => {
      const page = await listConversations(pid, { ...v, cursor });
      rows.append(...page.conversations.map((c) => h("tr", {},
        h("td", {}, h("a", { href: `#/conversations/${c.id}` }, when(c.started_at))), h("td", {}, kindLabel(c.kind)),
        h("td", {}, n.agent(c.agent_id)), h("td", {}, n.channel(c)), h("td", {}, statusBadge(c.status)),
        h("td", { class: "num" }, c.status === "live" ? "" : clock(c.duration_ms)))));
      more.hidden = !page.next_cursor;
      more.onclick = () => load(page.next_cursor || "").catch((e) => more.after(notice(errorText(e), "error")));
      return page.conversations.length;
    };
    if (!(await load(""))) {
      const any = Object.values(v).some((x) => x);
      return h("div", { class: "card empty-state" }, any ? h("p", {}, "No conversations match these filters.")
        : [h("p", {}, h("b", {}, "No conversations yet.")), h("p", { class: "muted" }, "Talk to an agent in its Test panel, or put a channel on a site: every conversation shows up here.")]);
    }
    return [h("div", { class: "table" }, h("table", {}, h("thead", {}, h("tr", {},
      ["Started", "Kind", "Agent", "Channel or number", "Status", "Duration"].map((x) => h("th", { scope: "col" }, x)))), rows)), more];
  }));
}

/**
 * timeline puts the transcript and the tool calls in the order they
 * happened, each with its time from the start.
 * @param {Conversation} c
 */
function timeline(c) {
  const start = Date.parse(c.started_at);
  const at = (/** @type {string} */ t) => (t ? clock(Math.max(0, Date.parse(t) - start)) : "");
  const items = (c.transcript || []).map((l) => ({ t: Date.parse(l.at), el: h("li", { class: l.speaker },
    h("span", { class: "at" }, at(l.at)), h("div", {}, h("span", { class: "who" }, (l.speaker === "agent" ? "Agent" : c.kind === "phone" ? "Caller" : "Visitor") + ":"), " ", l.text,
      l.latency_ms !== undefined ? h("span", { class: "muted", title: "Time from the end of the turn's speech to the first audio of this answer" }, ` (answered in ${l.latency_ms} ms)`) : null)) }));
  for (const u of c.tool_calls || []) {
    items.push({ t: Date.parse(u.at), el: h("li", { class: "tool" + (u.is_error ? " error" : "") },
      h("span", { class: "at" }, at(u.at)), h("div", {}, h("span", { class: "who" }, "Tool " + u.name + (u.is_error ? " (error)" : "")),
        h("dl", { class: "tool-call" },
          h("dt", {}, "Arguments"), h("dd", {}, h("code", {}, json(u.arguments ?? {}))),
          h("dt", {}, u.is_error ? "Error" : "Result"), h("dd", {}, h("code", {}, u.result || "—")),
          u.duration_ms !== null && u.duration_ms !== undefined ? [h("dt", {}, "Took"), h("dd", {}, `${u.duration_ms} ms`)] : null))) });
  }
  items.sort((a, b) => a.t - b.t);
  if (!items.length) return h("p", { class: "muted" }, "Nothing was said.");
  return h("ol", { class: "transcript timed" }, items.map((x) => x.el));
}

/** @type {Record<string, string>} */
const recordingStates = { pending: "The recording is being stored; it appears here shortly.", failed: "The recording could not be stored.",
  deleted: "The recording was deleted (the project's retention time)." };

/**
 * recordingCard plays a call's recording: the audio is fetched with the
 * session's token (an <audio src> could not send it) into a blob URL.
 * @param {Recording} rec
 */
function recordingCard(rec) {
  const box = h("section", { class: "card", "aria-labelledby": "rec-title" }, h("h2", { id: "rec-title" }, "Recording"));
  if (!rec.url) {
    box.append(h("p", { class: "muted" }, recordingStates[rec.status] || `Recording: ${rec.status}.`));
    return box;
  }
  const audio = h("audio", { controls: true, preload: "none", "aria-label": "Call recording" });
  const err = h("p", { class: "form-error", role: "alert" });
  box.append(audio, h("p", { class: "muted" }, `${clock(rec.duration_ms)} · ${Math.round((rec.size_bytes || 0) / 1024)} KB · caller left, agent right`), err);
  recording(rec.url).then((blob) => {
    audio.src = URL.createObjectURL(blob);
  }).catch((e) => (err.textContent = "The recording cannot be loaded: " + errorText(e)));
  return box;
}

/** analysisCard shows what the analysis learned, or where it is. @param {Analysis} an */
function analysisCard(an) {
  const box = h("section", { class: "card analysis", "aria-labelledby": "analysis-title" }, h("h2", { id: "analysis-title" }, "Analysis"));
  if (an.status === "pending") return box.append(h("p", { class: "muted" }, "Analysing the conversation…")), box;
  if (an.status === "failed") return box.append(notice("The analysis failed: " + (an.error || "no reason given"), "error")), box;
  if (an.status === "skipped") return box.append(h("p", { class: "muted" }, "Not analysed" + (an.error ? `: ${an.error}` : "."))), box;
  const ok = an.success === true ? "Yes" : an.success === false ? "No" : "Not judged";
  /** @type {[string, Child][]} */
  const verdict = [["Succeeded", h("span", { class: "success " + String(an.success) }, ok)], ["Why", an.success_reason || "—"]];
  box.append(...flat([
    an.summary ? h("p", { class: "summary" }, an.summary) : null,
    h("dl", {}, verdict.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    an.data && Object.keys(an.data).length ? [h("h3", {}, "Extracted data"), h("dl", { class: "data" },
      Object.entries(an.data).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v === null ? "—" : json(v))]))] : null,
    h("p", { class: "muted" }, [an.model, an.finished_at ? "at " + when(an.finished_at) : ""].filter(Boolean).join(" "))]));
  return box;
}

/** deliveriesCard lists the webhook deliveries of the conversation's events. @param {string} id */
async function deliveriesCard(id) {
  const box = h("section", { class: "card", "aria-labelledby": "deliveries-title" }, h("h2", { id: "deliveries-title" }, "Webhook deliveries"));
  let res;
  try {
    res = await listConversationDeliveries(id);
  } catch (e) {
    return box.append(notice(errorText(e), "error")), box;
  }
  box.append(table(["Event", "Endpoint", "Status", "Attempts", "Last answer", "Sent"], res.deliveries.map((d) => h("tr", {},
    h("td", {}, d.event_type), h("td", { class: "wrap" }, d.webhook_url), h("td", {}, h("span", { class: "status " + d.status }, d.status)),
    h("td", { class: "num" }, String(d.attempt_count)), h("td", {}, d.last_status_code ? `HTTP ${d.last_status_code}` : "—"), h("td", {}, when(d.created_at)))),
  "No webhook deliveries: the project has no endpoint for these events."),
  h("p", { class: "muted" }, h("a", { href: "#/webhooks" }, "Webhook endpoints")));
  return box;
}

/** conversationPage is one conversation whole. @param {PageContext} ctx @param {string} id */
export async function conversationPage({ show }, id) {
  const [c, n] = await Promise.all([getConversation(id), names()]);
  const title = c.kind === "phone" ? `${c.direction === "test" ? "Test call" : "Call"} ${c.direction === "outbound" ? "to " + c.to : "from " + c.from}` : `${kinds[c.kind] || "Conversation"} ${when(c.started_at)}`;
  const del = h("button", { type: "button", class: "danger" }, "Delete conversation");
  const err = h("p", { class: "form-error", role: "alert" });
  del.addEventListener("click", async () => {
    if (!(await confirmAction("Delete this conversation with its transcript, tool calls and recording? This cannot be undone.", "Delete conversation"))) return;
    try {
      await deleteConversation(id);
      location.hash = "#/conversations";
    } catch (e) {
      err.textContent = errorText(e);
    }
  });
  /** @type {([string, Child] | null)[]} */
  const facts = [["Kind", kindLabel(c.kind)], ["Status", statusBadge(c.status)], ["Agent", n.agent(c.agent_id)],
    ["Agent version", c.agent_version ? h("a", { href: `#/agents/${c.agent_id}/versions` }, `Version ${c.agent_version}`) : "—"], ["Channel or number", n.channel(c)],
    c.kind === "phone" ? ["From → to", `${c.from} → ${c.to}`] : null, ["Started", when(c.started_at)], ["Ended", when(c.ended_at) || "—"],
    ["Duration", c.status === "live" ? "live" : clock(c.duration_ms)], ["End reason", c.end_reason || "—"],
    c.latency ? ["Turn latency", `p50 ${c.latency.p50_ms} ms · p95 ${c.latency.p95_ms} ms · max ${c.latency.max_ms} ms (${plural(c.latency.turns, "turn")})`] : null,
    ["Id", h("code", {}, c.id)]];
  const lead = c.lead ? h("section", { class: "card", "aria-labelledby": "lead-title" }, h("h2", { id: "lead-title" }, "Lead"),
    answerList(formFields(n.channels.find((x) => x.id === c.channel_id)), c.lead.answers)) : null;
  show(title, h("p", {}, h("a", { href: "#/conversations" }, "← Conversations")),
    h("div", { class: "card" }, h("dl", { class: "facts" }, facts.map((f) => f && [h("dt", {}, f[0]), h("dd", {}, f[1])]))),
    c.recording ? recordingCard(c.recording) : null,
    c.analysis ? analysisCard(c.analysis) : null,
    lead,
    h("section", { class: "card", "aria-labelledby": "transcript-title" }, h("h2", { id: "transcript-title" }, "Transcript"),
      h("p", { class: "muted" }, `${plural((c.transcript || []).length, "line")}, ${plural((c.tool_calls || []).length, "tool call")}`), timeline(c)),
    await deliveriesCard(id),
    can("delete") ? h("div", { class: "card" }, h("h2", {}, "Danger zone"), del, err) : null);
}
