// @ts-check
// The project's analytics across channels: totals, a chart per day of
// conversations, minutes, tool calls and tool errors, breakdowns by kind,
// agent, channel and end reason, and what each campaign's calls came to;
// CSV export.

import { downloadAnalyticsCSV, getAnalytics } from "../api.js";
import { h, s, table, errorText } from "../dom.js";
import { filtered } from "../forms.js";
import { project } from "../router.js";
import { clock, kinds, names } from "./conversations.js";

/** @import {PageContext} from "../router.js" */
/** @import {CampaignStat, ConversationTotals, TurnLatency} from "../types.js" */

/** @param {Date} d */
function isoDay(d) {
  return d.toISOString().slice(0, 10);
}

/** count shows a count as it is and a fraction with one or two decimals. @param {number} x */
function count(x) {
  if (Number.isInteger(x)) return String(x);
  return x < 10 ? x.toFixed(2) : x.toFixed(1);
}

/** @typedef {"day" | "kind" | "agent_id" | "channel" | "end_reason"} GroupKey */

/**
 * breakdown is one table of the analytics: rows of a group with their sums.
 * @template {GroupKey} K
 * @param {string} title @param {string} column @param {ConversationTotals[]} rows @param {K} key
 * @param {(k: ConversationTotals[K]) => string} name names a row by its key's value
 */
function breakdown(title, column, rows, key, name) {
  return h("section", { class: "card" }, h("h2", {}, title), table([column, "Conversations", "Minutes", "Tool calls", "Tool errors", "Success"],
    rows.map((r) => h("tr", {}, h("td", {}, name(r[key])), h("td", { class: "num" }, String(r.conversations)),
      h("td", { class: "num" }, clock(r.minutes * 60000)), h("td", { class: "num" }, String(r.tool_calls)), h("td", { class: "num" }, String(r.tool_errors)),
      h("td", { class: "num", title: r.evaluated ? `of ${r.evaluated} judged` : "" }, successRate(r, true)))),
    "None."));
}

/**
 * latencies is the table of turn latencies per agent and day, every
 * channel together (docs/conversations.md, turn latency).
 * @param {(TurnLatency & {day: string, agent_id: number})[]} rows @param {(id: number) => string} agent
 */
function latencies(rows, agent) {
  const ms = (/** @type {number} */ x) => h("td", { class: "num" }, `${x} ms`);
  return h("section", { class: "card" }, h("h2", {}, "Turn latency"), table(["Day", "Agent", "Turns", "p50", "p95", "Max"],
    rows.map((r) => h("tr", {}, h("td", {}, r.day), h("td", {}, agent(r.agent_id)), h("td", { class: "num" }, String(r.turns)),
      ms(r.p50_ms), ms(r.p95_ms), ms(r.max_ms))),
  "None measured."));
}

/**
 * campaigns is the table of what each campaign's calls in the range came
 * to: dials, how they were answered or not, opt-outs, the analyses'
 * success rate and the minutes (docs/api.md, analytics).
 * @param {CampaignStat[]} rows
 */
function campaigns(rows) {
  const num = (/** @type {number} */ x) => h("td", { class: "num" }, String(x));
  return h("section", { class: "card" }, h("h2", {}, "Campaigns"),
    table(["Campaign", "Dialed", "Answered", "Voicemail", "Busy", "No answer", "Opted out", "Success", "Minutes"],
      rows.map((r) => h("tr", {}, h("td", {}, r.name), num(r.dialed), num(r.answered), num(r.voicemail), num(r.busy), num(r.no_answer),
        num(r.opted_out), h("td", { class: "num", title: r.evaluated ? `of ${r.evaluated} judged` : "" }, successRate(r, true)),
        h("td", { class: "num" }, clock(r.minutes * 60000)))),
      "None."));
}

/**
 * successRate shows the share of analysed conversations judged successful
 * (docs/analysis.md), with how many were judged; "n/a" when none was.
 * @param {{success_rate?: number | null, evaluated?: number}} r @param {boolean} [short]
 */
function successRate(r, short) {
  if (r.success_rate == null) return "n/a";
  const pct = `${Math.round(r.success_rate * 100)}%`;
  return short ? pct : `${pct} of ${r.evaluated}`;
}

/** @param {PageContext} ctx */
export async function analyticsPage({ show }) {
  const p = project(), pid = p.id;
  const n = await names();
  const today = new Date();
  const csvErr = h("span", { class: "form-error", role: "alert" });
  let range = {};
  const csv = h("button", { type: "button" }, "Export CSV");
  csv.addEventListener("click", () => downloadAnalyticsCSV(pid, range, `analytics-${p.name}.csv`)
    .then(() => (csvErr.textContent = ""), (e) => (csvErr.textContent = errorText(e))));
  show("Analytics", h("div", { class: "row" }, csv, csvErr), filtered([
    { name: "from", label: "From", type: "date", value: isoDay(new Date(today.getTime() - 29 * 864e5)) },
    { name: "to", label: "To (exclusive)", type: "date", value: isoDay(new Date(today.getTime() + 864e5)) },
  ], async (v) => {
    range = v;
    const res = await getAnalytics(pid, v);
    const cv = res.conversations, t = cv.totals, camps = res.campaigns || [];
    if (!t.conversations && !t.leads && !camps.length) {
      return h("div", { class: "card empty-state" }, h("p", {}, h("b", {}, "No conversations yet.")),
        h("p", { class: "muted" }, "Nothing in this range. Talk to an agent in its Test panel or put a channel on a site; the numbers start with the first conversation."),
        n.agents.length ? h("p", {}, h("a", { href: `#/agents/${n.agents[0].id}/test` }, `Test ${n.agents[0].name}`)) : h("p", {}, h("a", { href: "#/agents" }, "Create an agent")));
    }
    const byDay = new Map(cv.by_day.map((d) => [d.day, d]));
    /** @type {(ConversationTotals & {day: string})[]} */
    const days = [];
    for (let d = Date.parse(res.from.slice(0, 10)); d < Date.parse(res.to) && days.length < 400; d += 864e5) {
      const day = isoDay(new Date(d));
      days.push({ ...(byDay.get(day) || { conversations: 0, minutes: 0, tool_calls: 0, tool_errors: 0 }), day });
    }
    const channel = (/** @type {string | undefined} */ k) => {
      const [type, id] = String(k).split(":");
      if (type === "channel") return n.channel({ channel_id: Number(id) });
      return id === "none" ? "Console tests" : n.channel({ kind: "phone", number_id: Number(id) });
    };
    /** @type {[string, string | number | undefined][]} */
    const totals = [["Conversations", t.conversations], ["Minutes", clock(t.minutes * 60000)], ["Tool calls", t.tool_calls],
      ["Tool errors", t.tool_errors], ["Leads", t.leads], ["Success rate", successRate(t)]];
    /** @type {[ChartKey, string][]} */
    const charts = [["conversations", "Conversations per day"], ["minutes", "Minutes per day"], ["tool_calls", "Tool calls per day"], ["tool_errors", "Tool errors per day"]];
    return [
      h("div", { class: "totals" }, totals.map(([k, x]) => h("div", {}, h("b", {}, String(x)), k))),
      h("div", { class: "charts" }, charts.map(([k, title]) => chart(title, days, k))),
      h("div", { class: "breakdowns" },
        breakdown("By kind", "Kind", cv.by_kind, "kind", (k = "") => kinds[k] || k),
        breakdown("By agent", "Agent", cv.by_agent, "agent_id", (id) => n.agent(id)),
        breakdown("By channel", "Channel or number", cv.by_channel, "channel", channel),
        breakdown("By end reason", "End reason", cv.end_reasons, "end_reason", (r) => r || "(none)")),
      cv.turn_latency && cv.turn_latency.length ? latencies(cv.turn_latency, (id) => n.agent(id)) : null,
      camps.length ? campaigns(camps) : null,
    ];
  }));
}

/** @typedef {"conversations" | "minutes" | "tool_calls" | "tool_errors"} ChartKey */

/**
 * chart draws one bar chart of days[*][key] in SVG. Minutes read as m:ss
 * on the axis, in the bars' titles and the label, as the total above them
 * does (not 1.10 beside 1:06).
 * @param {string} title @param {(ConversationTotals & {day: string})[]} days @param {ChartKey} key
 */
function chart(title, days, key) {
  const num = key === "minutes" ? (/** @type {number} */ x) => clock(Math.round(x * 60000)) : count;
  const W = 600, H = 220, left = 48, bottom = 28, top = 12;
  const max = Math.max(1, ...days.map((d) => d[key]));
  const bw = (W - left - 4) / Math.max(1, days.length);
  const y = (/** @type {number} */ x) => top + (H - top - bottom) * (1 - x / max);
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
