// @ts-check
// A campaign's page: its facts, the Start / Pause / Resume / Cancel
// buttons its status allows, its contacts counted by status (read again
// every few seconds while it runs, on the router's timer, so leaving the
// page stops it), its settings, the CSV upload and the contacts
// (pages/contacts.js), and Delete for owners.

import { campaignAction, deleteCampaign, getCampaign, listAgents, updateCampaign } from "../api.js";
import { h, confirmAction, when, alertError, errorText } from "../dom.js";
import { form } from "../forms.js";
import { can, project, render } from "../router.js";
import { CONTACT_STATUSES, settingsBody, settingsFields, statusPill, windowText } from "./campaigns.js";
import { contactsCard, uploadCard } from "./contacts.js";

/** @import {PageContext} from "../router.js" */
/** @import {Campaign, CampaignStatus} from "../types.js" */
/** @import {Child} from "../dom.js" */

/** How often a running campaign's counts are read again, in milliseconds. */
export const POLL_MS = 3000;

/** @type {[CampaignStatus[], "start" | "pause" | "resume" | "cancel", string, string | null][]} the actions: from which statuses, the API's name, the button, the question first */
const actions = [
  [["draft"], "start", "Start", null],
  [["running"], "pause", "Pause", null],
  [["paused"], "resume", "Resume", null],
  [["draft", "running", "paused"], "cancel", "Cancel campaign",
    "Cancel this campaign for good? No contact is dialed again; calls in progress go on to their end."],
];

/** open says whether contacts can still be added and settings changed. @param {Campaign} c */
const open = (c) => c.status === "draft" || c.status === "running" || c.status === "paused";

/** countBoxes are the campaign's contacts counted by status, one box each. @param {Campaign} c */
function countBoxes(c) {
  /** @type {[string, string][]} */
  const all = [["total", "Total"], ...CONTACT_STATUSES];
  return all.map(([s, l]) => h("div", { "data-count": s }, h("b", {}, c.counts[/** @type {keyof Campaign["counts"]} */ (s)] || 0), l));
}

/** facts are what the campaign is: status, agent, window, limits, voicemail, times. @param {Campaign} c @param {string} agent */
function facts(c, agent) {
  const vm = c.voicemail.action === "leave_message" ? `Leave a message: “${c.voicemail.message || ""}”` : "Hang up";
  /** @type {[string, Child][]} */
  const list = [
    ["Status", statusPill(c.status)],
    ["Agent", h("a", { href: `#/agents/${c.agent_id}` }, agent)],
    ["Calling window", windowText(c.calling_window) + " in each contact's local time"],
    ["Limits", `${c.max_concurrent_calls} at once, ${c.calls_per_second} per second, ${c.max_attempts} attempts ${c.retry_after} apart`],
    ["At a voicemail", vm],
    ["Created", when(c.created_at)],
  ];
  if (c.started_at) list.push(["Started", when(c.started_at)]);
  if (c.finished_at) list.push(["Finished", when(c.finished_at)]);
  return h("dl", { class: "facts card", id: "campaign-facts" }, list.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

/** @param {PageContext} ctx @param {string} id */
export async function campaignPage(ctx, id) {
  const pid = project().id;
  const [first, agents] = await Promise.all([getCampaign(id), listAgents(pid)]);
  let c = first;
  const agent = agents.find((a) => a.id === c.agent_id);
  const problem = h("p", { class: "form-error", role: "alert", id: "campaign-problem" });
  const counts = h("div", { class: "totals", id: "counts" }, countBoxes(c));
  // A running campaign's counts move as its calls end: read it again
  // every few seconds while this page is open (the router's timer, which
  // stops when the page is left). A new status draws the whole page.
  if (c.status === "running") {
    ctx.every(POLL_MS, async () => {
      try {
        const now = await getCampaign(c.id);
        problem.textContent = "";
        if (now.status !== c.status) return render();
        c = now;
        counts.replaceChildren(...countBoxes(c));
      } catch (e) {
        problem.textContent = errorText(e);
      }
    });
  }
  const contacts = contactsCard(c);
  const refresh = async () => {
    c = await getCampaign(c.id);
    counts.replaceChildren(...countBoxes(c));
    contacts.reload();
  };
  ctx.show(c.name, h("p", {}, h("a", { href: "#/campaigns" }, "All campaigns")), facts(c, agent ? agent.name : `agent ${c.agent_id}`),
    actionButtons(c, problem), problem,
    h("section", { class: "card", "aria-labelledby": "counts-title" }, h("h2", { id: "counts-title" }, "Contacts by status"),
      c.status === "running" ? h("p", { class: "muted" }, "Read again every few seconds while the campaign runs.") : null, counts),
    h("div", { class: "cols", id: "campaign-cols" }, open(c) ? settingsCard(c, agents) : null, open(c) && can("create") ? uploadCard(c, refresh) : null),
    contacts.node, can("delete") ? deleteCard(c) : null);
}

/** actionButtons are the actions the campaign's status allows, for editors and owners. @param {Campaign} c @param {HTMLElement} problem */
function actionButtons(c, problem) {
  if (!can("create")) return null;
  const buttons = actions.filter(([from]) => from.includes(c.status)).map(([, action, label, ask]) => {
    const b = h("button", { type: "button", class: action === "cancel" ? "danger" : "primary" }, label);
    b.addEventListener("click", async () => {
      if (ask && !(await confirmAction(ask, label))) return;
      problem.textContent = "";
      b.disabled = true;
      try {
        await campaignAction(c.id, action);
        render();
      } catch (e) {
        problem.textContent = errorText(e);
        b.disabled = false;
      }
    });
    return b;
  });
  return buttons.length ? h("div", { class: "row", id: "campaign-actions" }, buttons) : null;
}

/**
 * settingsCard edits the window, limits, retries and voicemail (the agent
 * too while the campaign is a draft); a viewer reads them disabled.
 * @param {Campaign} c @param {import("../types.js").Agent[]} agents
 */
function settingsCard(c, agents) {
  const draft = c.status === "draft";
  const saved = h("p", { role: "status", class: "muted" });
  const f = form(settingsFields(c, draft ? agents : null), "Save settings", async (v) => {
    await updateCampaign(c.id, settingsBody(v, draft));
    saved.textContent = "Saved.";
    render();
  }, { label: "Campaign settings", extra: saved, need: "create" });
  return h("section", { class: "card", id: "settings" }, h("h2", {}, "Settings"),
    c.status === "running" ? h("p", { class: "muted" }, "Changes apply to the next dials.") : null, f);
}

/** deleteCard deletes the campaign with its contacts, asking first (owners). @param {Campaign} c */
function deleteCard(c) {
  if (c.status === "running") {
    return h("section", { class: "card" }, h("h2", {}, "Danger zone"), h("p", { class: "muted" }, "Pause or cancel the campaign to delete it."));
  }
  const del = h("button", { type: "button", class: "danger" }, "Delete campaign");
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete ${c.name}? Its contacts and dial log go with it; its calls stay in the conversations.`, "Delete campaign"))) return;
    try {
      await deleteCampaign(c.id);
      location.hash = "#/campaigns";
    } catch (e) {
      alertError(e);
    }
  });
  return h("section", { class: "card" }, h("h2", {}, "Danger zone"), del);
}
