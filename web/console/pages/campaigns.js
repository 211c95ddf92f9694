// @ts-check
// The Campaigns page: the project's campaigns with their agent, status and
// counts, the form of a new one (the API's defaults, from its catalog,
// filled in), and the
// project's do-not-call list (pages/dnc.js). A campaign's own page is
// pages/campaign.js; the API is docs/campaigns.md.

import { createCampaign, getCatalog, listAgents, listCampaigns } from "../api.js";
import { h, notice, plural, alertError } from "../dom.js";
import { FieldError, agentOptions, form, input } from "../forms.js";
import { can, features, project } from "../router.js";
import { dncCard } from "./dnc.js";

/** @import {PageContext} from "../router.js" */
/** @import {FieldSpec, FormValues} from "../forms.js" */
/** @import {Agent, Campaign, CampaignStatus, ContactStatus} from "../types.js" */

/** @type {[string, string][]} a calling window's days: the API's name and the label */
export const DAYS = [["mon", "Mon"], ["tue", "Tue"], ["wed", "Wed"], ["thu", "Thu"], ["fri", "Fri"], ["sat", "Sat"], ["sun", "Sun"]];

/** @type {[ContactStatus, string][]} the contact statuses, in the order contacts go through them, in words */
export const CONTACT_STATUSES = [["pending", "Pending"], ["calling", "Calling"], ["completed", "Completed"], ["voicemail", "Voicemail"],
  ["busy", "Busy"], ["no_answer", "No answer"], ["failed", "Failed"], ["opted_out", "Opted out"], ["do_not_call", "Do not call"]];

/**
 * @typedef {Pick<Campaign, "name" | "calling_window" | "max_concurrent_calls" | "calls_per_second" | "max_attempts" |
 *   "retry_after" | "voicemail"> & {agent_id: number | null}} Settings what the settings form edits
 */

/** How many campaigns a page of the list holds. */
const PAGE = 50;

/** @type {Record<CampaignStatus, string>} the status pill's class of a campaign's status */
const pill = { draft: "", running: "live", paused: "warn", completed: "ended", cancelled: "bad" };

/** statusPill shows a campaign's status. @param {CampaignStatus} s */
export function statusPill(s) {
  return h("span", { class: "status " + (pill[s] || ""), "data-status": s }, s);
}

/** windowText says a calling window in words: "Mon, Tue, Wed, 09:00–20:00". @param {Campaign["calling_window"]} w */
export function windowText(w) {
  return DAYS.filter(([d]) => w.days.includes(d)).map(([, l]) => l).join(", ") + `, ${w.start}–${w.end}`;
}

/** countsText says a campaign's counts: "4 contacts: 3 pending, 1 do not call". @param {Campaign} c */
export function countsText(c) {
  if (!c.counts.total) return "No contacts yet";
  const parts = CONTACT_STATUSES.filter(([s]) => c.counts[s]).map(([s, l]) => `${c.counts[s]} ${l.toLowerCase()}`);
  return `${plural(c.counts.total, "contact")}: ${parts.join(", ")}`;
}

let groupSeq = 0;

/** daysField is the window's days, a checkbox each, with the API's error about them under it. @param {string[]} days */
function daysField(days) {
  const err = h("p", { class: "field-error", id: `days-err-${++groupSeq}`, "data-error-for": "calling_window.days" });
  return h("fieldset", { class: "days", "aria-describedby": err.id }, h("legend", {}, "Calling days"),
    h("div", { class: "row" }, DAYS.map(([d, l]) => h("label", { class: "check" },
      h("input", { type: "checkbox", name: `calling_window.days.${d}`, "data-kind": "checkbox", checked: days.includes(d) }), l))), err);
}

/**
 * settingsFields are a campaign's settings as fields: its name, its agent
 * (agents null: it cannot change any more), the calling window, the limits
 * and what a call does at a voicemail (its message shown when one is left).
 * @param {Settings} c @param {Agent[] | null} agents @returns {(FieldSpec | Node)[]}
 */
export function settingsFields(c, agents) {
  const action = input({ name: "voicemail.action", label: "When a machine answers", type: "select", value: c.voicemail.action,
    options: [["hang_up", "Hang up"], ["leave_message", "Leave a message after the beep"]] });
  const message = input({ name: "voicemail.message", label: "Voicemail message", type: "textarea", rows: 3, value: c.voicemail.message || "",
    hint: "The words spoken after the beep; at most 1000 characters." });
  const select = /** @type {HTMLSelectElement} */ (action.querySelector("select"));
  const toggle = () => (message.hidden = select.value !== "leave_message");
  select.addEventListener("change", toggle);
  toggle();
  /** @param {FieldSpec[]} specs */
  const pair = (...specs) => h("div", { class: "cols2" }, specs.map(input));
  return [
    input({ name: "name", label: "Name", value: c.name, required: true, placeholder: "Spring renewals" }),
    agents ? input({ name: "agent_id", label: "Agent", type: "select", value: c.agent_id === null ? null : String(c.agent_id),
      options: agentOptions(agents), hint: "Calls go out from the agent's phone number; the agent speaks first." }) : null,
    daysField(c.calling_window.days),
    pair({ name: "calling_window.start", label: "Calling from", value: c.calling_window.start, placeholder: "09:00",
      hint: "HH:MM on a 24-hour clock, in each contact's local time." },
    { name: "calling_window.end", label: "Calling until", value: c.calling_window.end, placeholder: "20:00", hint: "Not included; 24:00 is the day's end." }),
    pair({ name: "max_concurrent_calls", label: "Max concurrent calls", type: "number", min: 1, value: c.max_concurrent_calls, hint: "1 to 1000 live calls at once." },
      { name: "calls_per_second", label: "Calls per second", type: "number", step: "any", value: c.calls_per_second,
        hint: "More than 0, at most 50; 0.5 is a call every two seconds." }),
    pair({ name: "max_attempts", label: "Max attempts", type: "number", min: 1, value: c.max_attempts, hint: "Dials of one contact, 1 to 10." },
      { name: "retry_after", label: "Retry after", value: c.retry_after, placeholder: "1h", hint: "A duration between attempts: 90s, 30m, 1h30m, 48h." }),
    action, message,
  ].filter((x) => x !== null);
}

/**
 * settingsBody is the API's body of the settings form's values: the days
 * checked as a list, and the agent when the form has it. An empty number
 * is refused here (the API would keep the old value).
 * @param {FormValues} v @param {boolean} withAgent
 */
export function settingsBody(v, withAgent) {
  for (const [name, label] of [["max_concurrent_calls", "Max concurrent calls"], ["calls_per_second", "Calls per second"], ["max_attempts", "Max attempts"]]) {
    if (v[name] === null || Number.isNaN(v[name])) throw new FieldError(name, `${label} needs a number.`);
  }
  const w = v.calling_window || {};
  /** @type {Record<string, unknown>} */
  const b = {
    name: v.name, calling_window: { days: DAYS.map(([d]) => d).filter((d) => w.days && w.days[d]), start: String(w.start).trim(), end: String(w.end).trim() },
    max_concurrent_calls: v.max_concurrent_calls, calls_per_second: v.calls_per_second, max_attempts: v.max_attempts,
    retry_after: String(v.retry_after).trim(), voicemail: v.voicemail,
  };
  if (withAgent) b.agent_id = v.agent_id ? Number(v.agent_id) : null;
  return b;
}

/** @param {PageContext} ctx */
export async function campaignsPage({ show }) {
  const pid = project().id;
  const [agents, first, dnc, catalog] = await Promise.all([listAgents(pid), listCampaigns(pid, { limit: PAGE }), dncCard(), getCatalog()]);
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const rows = h("tbody", {});
  const more = h("button", { type: "button", hidden: true }, "More campaigns");
  /** @param {import("../types.js").CampaignPage} page */
  const add = (page) => {
    rows.append(...page.campaigns.map((c) => h("tr", { "data-campaign": c.id },
      h("td", {}, h("a", { href: `#/campaigns/${c.id}` }, c.name)), h("td", {}, names.get(c.agent_id) || `agent ${c.agent_id}`),
      h("td", {}, statusPill(c.status)), h("td", {}, countsText(c)), h("td", {}, windowText(c.calling_window)))));
    more.hidden = !page.next_cursor;
    more.onclick = () => listCampaigns(pid, { limit: PAGE, cursor: page.next_cursor }).then(add).catch(alertError);
  };
  add(first);
  const list = first.campaigns.length
    ? h("div", { class: "table" }, h("table", { id: "campaign-list" },
      h("thead", {}, h("tr", {}, ["Campaign", "Agent", "Status", "Contacts", "Calling window"].map((x) => h("th", { scope: "col" }, x)))), rows))
    : h("p", { class: "muted" }, "No campaigns yet.");
  show("Campaigns",
    h("p", { class: "muted" }, "A campaign is a list of people an agent calls from its phone number, inside a calling window in each person's local time, ",
      "never twice by mistake and never a number on the do-not-call list."),
    features().telephony_enabled ? null
      : notice("Telephony is off on this server (TELEPHONY_ENABLED), so agents have no phone numbers and campaigns cannot start; you can still prepare them and their contacts."),
    list, more, can("create") ? newCampaignCard(pid, agents, catalog.campaign_defaults) : null, dnc);
}

/**
 * newCampaignCard is the form of a new campaign, filled with the API's
 * defaults as its catalog gives them (getCatalog), so that the form
 * shows what a campaign created without them would get.
 * @param {number} pid @param {Agent[]} agents @param {import("../types.js").Catalog["campaign_defaults"]} defaults
 */
function newCampaignCard(pid, agents, defaults) {
  const card = h("section", { class: "card", id: "new-campaign" }, h("h2", {}, "New campaign"));
  if (!agents.length) {
    card.append(h("p", {}, "A campaign's calls are made by an agent. ", h("a", { href: "#/agents" }, "Create an agent"), " first."));
    return card;
  }
  const settings = { ...defaults, voicemail: { message: "", ...defaults.voicemail }, name: "", agent_id: agents[0].id };
  card.append(form(settingsFields(settings, agents), "Create campaign", async (v) => {
    const c = await createCampaign(pid, settingsBody(v, true));
    location.hash = `#/campaigns/${c.id}`;
  }, { label: "New campaign" }));
  return card;
}
