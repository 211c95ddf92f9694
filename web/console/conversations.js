// The conversations pages and analytics: one list of widget sessions, live
// chats and phone calls (GET /api/projects/{id}/conversations), one
// conversation whole (transcript, tool calls, recording, analysis, lead,
// webhook deliveries), and the project's analytics across channels.

import {
  h, s, flat, api, state, query, when, table, notice, confirmAction, filtered, plural, json, fetchBlob, download, agentOptions,
  answerList, formFields, can,
} from "./ui.js";

// clock shows a duration as m:ss (h:mm:ss from an hour).
function clock(ms) {
  if (ms === null || ms === undefined) return "";
  const t = Math.round(ms / 1000), hr = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), sec = String(t % 60).padStart(2, "0");
  return hr ? `${hr}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

const kinds = { widget: "Widget", live_chat: "Live chat", phone: "Phone call" };
const statuses = { live: "Live", ended: "Ended", abandoned: "Abandoned", failed: "Failed" };

// kindIcon draws a kind's small icon; the label next to it says the kind.
function kindIcon(kind) {
  const d = {
    widget: "M3 4h14v9H8l-4 3v-3H3z",
    live_chat: "M3 3h14v4H3zM3 9h14v4H3zM3 15h8v2H3z",
    phone: "M5 2l3 0 1 4-2 1a10 10 0 0 0 6 6l1-2 4 1v3a2 2 0 0 1-2 2A15 15 0 0 1 3 4a2 2 0 0 1 2-2z",
  }[kind] || "M4 4h12v12H4z";
  return s("svg", { class: "kind-icon", viewBox: "0 0 20 20", width: 16, height: 16, "aria-hidden": "true", focusable: "false" }, s("path", { d }));
}

function kindLabel(kind) {
  return h("span", { class: "kind " + kind }, kindIcon(kind), " ", kinds[kind] || kind);
}

function statusBadge(st) {
  return h("span", { class: "status " + st }, statuses[st] || st);
}

// names loads what a conversation's ids point at: agents, channels and
// (with telephony) the project's numbers.
async function names() {
  const pid = state.project.id;
  const [agents, channels, numbers] = await Promise.all([
    api("GET", `/api/projects/${pid}/agents`), api("GET", `/api/projects/${pid}/channels`),
    state.me.features.telephony_enabled ? api("GET", `/api/projects/${pid}/telephony/numbers`).catch(() => []) : [],
  ]);
  return {
    agents, channels, agent: (id) => (agents.find((a) => a.id === id) || {}).name || (id ? `agent ${id}` : ""),
    channel: (c) => {
      if (c.channel_id) return (channels.find((x) => x.id === c.channel_id) || {}).name || `channel ${c.channel_id}`;
      if (c.kind === "phone") {
        if (c.direction === "test") return "Browser test call";
        const n = numbers.find((x) => x.id === c.number_id);
        return (n && n.phone_number) || (c.direction === "outbound" ? c.from : c.to) || "phone";
      }
      return "Console test";
    },
  };
}

// conversationsPage lists the project's conversations, newest first, with
// filters and text search; "Load more" follows next_cursor.
export async function conversationsPage({ show }) {
  const pid = state.project.id;
  const n = await names();
  const option = (obj, all) => [["", all]].concat(Object.entries(obj));
  show("Conversations", filtered([
    { name: "q", label: "Search", type: "search", placeholder: "Words said, a number, an id" },
    { name: "kind", label: "Kind", type: "select", options: option(kinds, "All kinds") },
    { name: "agent_id", label: "Agent", type: "select", options: agentOptions(n.agents, "All agents") },
    { name: "status", label: "Status", type: "select", options: option(statuses, "Any status") },
    { name: "from", label: "From", type: "date" }, { name: "to", label: "To (exclusive)", type: "date" },
  ], async (v) => {
    const filters = v;
    const rows = h("tbody", {});
    const more = h("button", { type: "button", hidden: true }, "Load more");
    const load = async (cursor) => {
      const page = await api("GET", `/api/projects/${pid}/conversations` + query({ ...filters, cursor }));
      rows.append(...page.conversations.map((c) => h("tr", {},
        h("td", {}, h("a", { href: `#/conversations/${c.id}` }, when(c.started_at))), h("td", {}, kindLabel(c.kind)),
        h("td", {}, n.agent(c.agent_id)), h("td", {}, n.channel(c)), h("td", {}, statusBadge(c.status)),
        h("td", { class: "num" }, c.status === "live" ? "" : clock(c.duration_ms)))));
      more.hidden = !page.next_cursor;
      more.onclick = () => load(page.next_cursor).catch((e) => more.after(notice(e.message, "error")));
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

// timeline puts the transcript and the tool calls in the order they
// happened, each with its time from the start.
function timeline(c) {
  const start = Date.parse(c.started_at);
  const at = (t) => (t ? clock(Math.max(0, Date.parse(t) - start)) : "");
  const items = (c.transcript || []).map((l) => ({ t: Date.parse(l.at), el: h("li", { class: l.speaker },
    h("span", { class: "at" }, at(l.at)), h("div", {}, h("span", { class: "who" }, (l.speaker === "agent" ? "Agent" : c.kind === "phone" ? "Caller" : "Visitor") + ":"), " ", l.text)) }));
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

// recordingCard plays a call's recording: the audio is fetched with the
// session's token (an <audio src> could not send it) into a blob URL.
function recordingCard(rec) {
  const box = h("section", { class: "card", "aria-labelledby": "rec-title" }, h("h2", { id: "rec-title" }, "Recording"));
  if (!rec.url) {
    box.append(h("p", { class: "muted" }, { pending: "The recording is being stored; it appears here shortly.", failed: "The recording could not be stored.",
      deleted: "The recording was deleted (the project's retention time)." }[rec.status] || `Recording: ${rec.status}.`));
    return box;
  }
  const audio = h("audio", { controls: true, preload: "none", "aria-label": "Call recording" });
  const err = h("p", { class: "form-error", role: "alert" });
  box.append(audio, h("p", { class: "muted" }, `${clock(rec.duration_ms)} · ${Math.round((rec.size_bytes || 0) / 1024)} KB · caller left, agent right`), err);
  fetchBlob(rec.url).then((blob) => {
    audio.src = URL.createObjectURL(blob);
  }).catch((e) => (err.textContent = "The recording cannot be loaded: " + e.message));
  return box;
}

// analysisCard shows what the analysis learned, or where it is.
function analysisCard(an) {
  const box = h("section", { class: "card analysis", "aria-labelledby": "analysis-title" }, h("h2", { id: "analysis-title" }, "Analysis"));
  if (an.status === "pending") return box.append(h("p", { class: "muted" }, "Analysing the conversation…")), box;
  if (an.status === "failed") return box.append(notice("The analysis failed: " + (an.error || "no reason given"), "error")), box;
  if (an.status === "skipped") return box.append(h("p", { class: "muted" }, "Not analysed" + (an.error ? `: ${an.error}` : "."))), box;
  const ok = an.success === true ? "Yes" : an.success === false ? "No" : "Not judged";
  box.append(...flat([
    an.summary ? h("p", { class: "summary" }, an.summary) : null,
    h("dl", {}, [["Succeeded", h("span", { class: "success " + String(an.success) }, ok)], ["Why", an.success_reason || "—"]]
      .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    an.data && Object.keys(an.data).length ? [h("h3", {}, "Extracted data"), h("dl", { class: "data" },
      Object.entries(an.data).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v === null ? "—" : json(v))]))] : null,
    h("p", { class: "muted" }, [an.model, an.finished_at ? "at " + when(an.finished_at) : ""].filter(Boolean).join(" "))]));
  return box;
}

// deliveriesCard lists the webhook deliveries of the conversation's events.
async function deliveriesCard(id) {
  const res = await api("GET", `/api/conversations/${id}/deliveries`).catch((e) => ({ error: e }));
  const box = h("section", { class: "card", "aria-labelledby": "deliveries-title" }, h("h2", { id: "deliveries-title" }, "Webhook deliveries"));
  if (res.error) return box.append(notice(res.error.message, "error")), box;
  box.append(table(["Event", "Endpoint", "Status", "Attempts", "Last answer", "Sent"], res.deliveries.map((d) => h("tr", {},
    h("td", {}, d.event_type), h("td", { class: "wrap" }, d.webhook_url), h("td", {}, h("span", { class: "status " + d.status }, d.status)),
    h("td", { class: "num" }, String(d.attempt_count)), h("td", {}, d.last_status_code ? `HTTP ${d.last_status_code}` : "—"), h("td", {}, when(d.created_at)))),
  "No webhook deliveries: the project has no endpoint for these events."),
  h("p", { class: "muted" }, h("a", { href: "#/webhooks" }, "Webhook endpoints")));
  return box;
}

// conversationPage is one conversation whole.
export async function conversationPage({ show }, id) {
  const [c, n] = await Promise.all([api("GET", `/api/conversations/${id}`), names()]);
  const title = c.kind === "phone" ? `${c.direction === "test" ? "Test call" : "Call"} ${c.direction === "outbound" ? "to " + c.to : "from " + c.from}` : `${kinds[c.kind] || "Conversation"} ${when(c.started_at)}`;
  const del = h("button", { type: "button", class: "danger" }, "Delete conversation");
  const err = h("p", { class: "form-error", role: "alert" });
  del.addEventListener("click", async () => {
    if (!(await confirmAction("Delete this conversation with its transcript, tool calls and recording? This cannot be undone.", "Delete conversation"))) return;
    try {
      await api("DELETE", `/api/conversations/${id}`);
      location.hash = "#/conversations";
    } catch (e) {
      err.textContent = e.message;
    }
  });
  const facts = [["Kind", kindLabel(c.kind)], ["Status", statusBadge(c.status)], ["Agent", n.agent(c.agent_id)], ["Channel or number", n.channel(c)],
    c.kind === "phone" ? ["From → to", `${c.from} → ${c.to}`] : null, ["Started", when(c.started_at)], ["Ended", when(c.ended_at) || "—"],
    ["Duration", c.status === "live" ? "live" : clock(c.duration_ms)], ["End reason", c.end_reason || "—"], ["Id", h("code", {}, c.id)]].filter(Boolean);
  const lead = c.lead ? h("section", { class: "card", "aria-labelledby": "lead-title" }, h("h2", { id: "lead-title" }, "Lead"),
    answerList(formFields(n.channels.find((x) => x.id === c.channel_id)), c.lead.answers)) : null;
  show(title, h("p", {}, h("a", { href: "#/conversations" }, "← Conversations")),
    h("div", { class: "card" }, h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))),
    c.recording ? recordingCard(c.recording) : null,
    c.analysis ? analysisCard(c.analysis) : null,
    lead,
    h("section", { class: "card", "aria-labelledby": "transcript-title" }, h("h2", { id: "transcript-title" }, "Transcript"),
      h("p", { class: "muted" }, `${plural((c.transcript || []).length, "line")}, ${plural((c.tool_calls || []).length, "tool call")}`), timeline(c)),
    await deliveriesCard(id),
    can("delete") ? h("div", { class: "card" }, h("h2", {}, "Danger zone"), del, err) : null);
}

// ---- analytics ----------------------------------------------------------

function isoDay(d) {
  return d.toISOString().slice(0, 10);
}

// count shows a count as it is and a fraction with one or two decimals.
function count(x) {
  if (Number.isInteger(x)) return String(x);
  return x < 10 ? x.toFixed(2) : x.toFixed(1);
}

// breakdown is one table of the analytics: rows of a group with their sums.
function breakdown(title, column, rows, key, name) {
  return h("section", { class: "card" }, h("h2", {}, title), table([column, "Conversations", "Minutes", "Tool calls", "Tool errors", "Success"],
    rows.map((r) => h("tr", {}, h("td", {}, name(r[key])), h("td", { class: "num" }, String(r.conversations)),
      h("td", { class: "num" }, clock(r.minutes * 60000)), h("td", { class: "num" }, String(r.tool_calls)), h("td", { class: "num" }, String(r.tool_errors)),
      h("td", { class: "num", title: r.evaluated ? `of ${r.evaluated} judged` : "" }, successRate(r, true)))),
    "None."));
}

// successRate shows the share of analysed conversations judged successful
// (docs/analysis.md), with how many were judged; "n/a" when none was.
function successRate(r, short) {
  if (r.success_rate == null) return "n/a";
  const pct = `${Math.round(r.success_rate * 100)}%`;
  return short ? pct : `${pct} of ${r.evaluated}`;
}

export async function analyticsPage({ show }) {
  const pid = state.project.id;
  const n = await names();
  const today = new Date();
  const csvErr = h("span", { class: "form-error", role: "alert" });
  let range = {};
  const csv = h("button", { type: "button" }, "Export CSV");
  csv.addEventListener("click", () => download(`/api/projects/${pid}/analytics.csv` + query(range), `analytics-${state.project.name}.csv`)
    .then(() => (csvErr.textContent = ""), (e) => (csvErr.textContent = e.message)));
  show("Analytics", h("div", { class: "row" }, csv, csvErr), filtered([
    { name: "from", label: "From", type: "date", value: isoDay(new Date(today.getTime() - 29 * 864e5)) },
    { name: "to", label: "To (exclusive)", type: "date", value: isoDay(new Date(today.getTime() + 864e5)) },
  ], async (v) => {
    range = v;
    const res = await api("GET", `/api/projects/${pid}/analytics` + query(v));
    const cv = res.conversations, t = cv.totals;
    if (!t.conversations && !t.leads) {
      return h("div", { class: "card empty-state" }, h("p", {}, h("b", {}, "No conversations yet.")),
        h("p", { class: "muted" }, "Nothing in this range. Talk to an agent in its Test panel or put a channel on a site; the numbers start with the first conversation."),
        n.agents.length ? h("p", {}, h("a", { href: `#/agents/${n.agents[0].id}/test` }, `Test ${n.agents[0].name}`)) : h("p", {}, h("a", { href: "#/agents" }, "Create an agent")));
    }
    const byDay = new Map(cv.by_day.map((d) => [d.day, d]));
    const days = [];
    for (let d = Date.parse(res.from.slice(0, 10)); d < Date.parse(res.to) && days.length < 400; d += 864e5) {
      const day = isoDay(new Date(d));
      days.push({ day, ...(byDay.get(day) || { conversations: 0, minutes: 0, tool_calls: 0, tool_errors: 0 }) });
    }
    const channel = (k) => {
      const [type, id] = String(k).split(":");
      if (type === "channel") return n.channel({ channel_id: Number(id) });
      return id === "none" ? "Console tests" : n.channel({ kind: "phone", number_id: Number(id) });
    };
    return [
      h("div", { class: "totals" }, [["Conversations", t.conversations], ["Minutes", clock(t.minutes * 60000)], ["Tool calls", t.tool_calls],
        ["Tool errors", t.tool_errors], ["Leads", t.leads], ["Success rate", successRate(t)]].map(([k, x]) => h("div", {}, h("b", {}, String(x)), k))),
      h("div", { class: "charts" }, [["conversations", "Conversations per day"], ["minutes", "Minutes per day"], ["tool_calls", "Tool calls per day"], ["tool_errors", "Tool errors per day"]]
        .map(([k, title]) => chart(title, days, k))),
      h("div", { class: "breakdowns" },
        breakdown("By kind", "Kind", cv.by_kind, "kind", (k) => kinds[k] || k),
        breakdown("By agent", "Agent", cv.by_agent, "agent_id", (id) => n.agent(id)),
        breakdown("By channel", "Channel or number", cv.by_channel, "channel", channel),
        breakdown("By end reason", "End reason", cv.end_reasons, "end_reason", (r) => r || "(none)")),
    ];
  }));
}

// chart draws one bar chart of days[*][key] in SVG. Minutes read as m:ss
// on the axis, in the bars' titles and the label, as the total above them
// does (not 1.10 beside 1:06).
function chart(title, days, key) {
  const num = key === "minutes" ? (x) => clock(Math.round(x * 60000)) : count;
  const W = 600, H = 220, left = 48, bottom = 28, top = 12;
  const max = Math.max(1, ...days.map((d) => d[key]));
  const bw = (W - left - 4) / Math.max(1, days.length);
  const y = (x) => top + (H - top - bottom) * (1 - x / max);
  const bars = days.map((d, i) => s("rect", { class: "bar", x: left + i * bw + 1, y: y(d[key]), width: Math.max(1, bw - 2), height: H - bottom - y(d[key]) },
    s("title", {}, `${d.day}: ${num(d[key])}`)));
  const first = days[0] ? days[0].day : "", last = days.length ? days[days.length - 1].day : "";
  const total = days.reduce((n, d) => n + d[key], 0);
  return h("figure", { class: "card chart" }, h("figcaption", {}, h("b", {}, title)),
    s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${title}: ${num(total)} in all from ${first} to ${last}, at most ${num(max)} a day` },
      s("line", { class: "axis", x1: left, y1: H - bottom, x2: W, y2: H - bottom }),
      s("line", { class: "axis", x1: left, y1: top, x2: left, y2: H - bottom }),
      s("text", { x: left - 6, y: top + 14, "text-anchor": "end" }, num(max)),
      s("text", { x: left - 6, y: H - bottom, "text-anchor": "end" }, "0"),
      s("text", { x: left, y: H - 6 }, first),
      s("text", { x: W, y: H - 6, "text-anchor": "end" }, last),
      bars));
}
