// @ts-check
// The leads page: the project's form submissions, filtered, with each
// lead's answers by its form's labels, its details (a live chat's agent,
// conversation and transcript) when opened, CSV export and delete.

import { deleteLead, downloadLeadsCSV, getLead, listLeads } from "../api.js";
import { h, confirmAction, json, transcript, when, alertError, errorText } from "../dom.js";
import { filterSelects, filtered } from "../forms.js";
import { can, project, render } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {Answers, Channel, FormField, Lead} from "../types.js" */
/** @import {Child} from "../dom.js" */

/**
 * answerList shows a lead's answers by its form's labels, in the form's
 * order (fields: the channel's settings.form.fields, when known); answers
 * to fields the form no longer has follow under their names. Checkboxes
 * read yes or no, as in the CSV.
 * @param {FormField[] | undefined} fields @param {Answers | null | undefined} answers
 */
export function answerList(fields, answers) {
  const a = answers || {};
  const rows = (fields || []).filter((f) => f.name in a).map((f) => [f.label || f.name, a[f.name]]);
  const known = new Set((fields || []).map((f) => f.name));
  for (const k of Object.keys(a).sort()) if (!known.has(k)) rows.push([k, a[k]]);
  return h("dl", { class: "answers" }, rows.map(([k, x]) => [h("dt", {}, k), h("dd", {}, typeof x === "boolean" ? (x ? "yes" : "no") : json(x))]));
}

/** formFields are a channel's form fields, or none for a widget channel. @param {Channel | undefined} channel */
export function formFields(channel) {
  return (channel && channel.settings && channel.settings.form && channel.settings.form.fields) || [];
}

/** @param {PageContext} ctx */
export async function leadsPage({ show }) {
  const p = project(), pid = p.id;
  const sel = await filterSelects();
  const names = new Map(sel.channels.map((c) => [c.id, c.name]));
  const fields = new Map(sel.channels.map((c) => [c.id, formFields(c)]));
  const agents = new Map(sel.agents.map((a) => [a.id, a.name]));
  // The export holds the leads the filters select.
  let filters = {};
  const csv = h("button", { type: "button" }, "Export CSV");
  const csvErr = h("span", { class: "form-error", role: "alert" });
  csv.addEventListener("click", async () => {
    csvErr.textContent = "";
    try {
      await downloadLeadsCSV(pid, filters, `leads-${p.name}.csv`);
    } catch (e) {
      csvErr.textContent = errorText(e);
    }
  });
  /** leadRow is a lead's row and the row of its details under it. @param {Lead} l */
  const leadRow = (l) => {
    const del = h("button", { type: "button", class: "danger" }, "Delete");
    del.addEventListener("click", async () => {
      if (!(await confirmAction(`Delete lead ${l.id}? Its answers are gone for good (a live chat's session stays).`, "Delete lead"))) return;
      try {
        await deleteLead(l.id);
        render();
      } catch (e) {
        alertError(e);
      }
    });
    // An opened lead's details take a row of their own below it, as wide
    // as the table, so the answers keep their column.
    const more = h("tr", { class: "lead-more", id: `lead-${l.id}-more`, hidden: true }, h("td", { colspan: 5 }));
    return [h("tr", { "data-lead": l.id }, h("td", {}, when(l.created_at)), h("td", {}, names.get(l.channel_id) || `channel ${l.channel_id}`),
      h("td", {}, answerList(fields.get(l.channel_id), l.answers)),
      h("td", {}, openButton(l, more, agents)), h("td", { class: "actions" }, can("delete") ? del : null)), more];
  };
  show("Leads", h("div", { class: "row" }, csv, csvErr), filtered([sel.channel, sel.agent,
    { name: "from", label: "From", type: "date" }, { name: "to", label: "To (exclusive)", type: "date" }], async (v) => {
    filters = v;
    const rows = h("tbody", {});
    const more = h("button", { type: "button", hidden: true }, "Older leads");
    const load = async (/** @type {number} */ offset) => {
      const res = await listLeads(pid, { ...v, offset });
      rows.append(...res.leads.flatMap(leadRow));
      more.hidden = res.next_offset === null || res.next_offset === undefined;
      more.onclick = () => load(Number(res.next_offset)).catch(alertError);
      return res.leads.length;
    };
    if (!(await load(0))) return h("p", { class: "muted" }, "No leads match.");
    return [h("div", { class: "table" }, h("table", { class: "leads" }, h("thead", {}, h("tr", {},
      ["When", "Channel", "Answers", "Details", ""].map((x) => h("th", { scope: "col" }, x)))), rows)), more];
  }));
}

/**
 * openButton shows and hides the lead's row of details, loaded from
 * getLead the first time: its mode, and a live chat's agent,
 * a link to its conversation and the transcript.
 * @param {Lead} l @param {HTMLTableRowElement} more @param {Map<number, string>} agents
 */
function openButton(l, more, agents) {
  const b = h("button", { type: "button", "aria-expanded": "false", "aria-controls": more.id }, `Open lead ${l.id}`);
  b.addEventListener("click", async () => {
    const open = more.hidden;
    more.hidden = !open;
    b.setAttribute("aria-expanded", String(open));
    b.textContent = `${open ? "Close" : "Open"} lead ${l.id}`;
    if (!open || more.dataset.loaded) return;
    more.dataset.loaded = "1";
    const cell = /** @type {HTMLTableCellElement} */ (more.firstChild);
    try {
      const full = await getLead(l.id);
      /** @type {Child} */
      const conv = full.session_id ? [h("a", { href: `#/conversations/${full.session_id}` }, "Open the conversation"), " ", h("code", {}, full.session_id)] : "—";
      /** @type {[string, Child][]} */
      const facts = [["Mode", full.mode === "live_chat" ? "Live chat" : "Lead capture"],
        ["Agent", full.agent_id ? agents.get(full.agent_id) || `agent ${full.agent_id}` : "—"], ["Conversation", conv]];
      cell.append(h("dl", { class: "facts" }, facts.map(([k, x]) => [h("dt", {}, k), h("dd", {}, x)])));
      if (full.session) cell.append(transcript(full.session.transcript.map((t) => ({ kind: "line", role: t.role, text: t.text }))));
    } catch (e) {
      cell.append(h("p", { class: "form-error", role: "alert" }, errorText(e)));
    }
  });
  return b;
}
