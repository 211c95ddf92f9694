// @ts-check
// The audit log: who changed what, when and from where. A project's log
// is its owners' (every change through the API and the console, by a
// person or a key); the instance's (sign-ins, accounts) is its
// administrators'. Both filter, page to older entries and export CSV.

import { downloadAuditCSV, listAuditLog } from "../api.js";
import { h, alertError, errorText, json, when } from "../dom.js";
import { filtered } from "../forms.js";
import { project } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {AuditActor, AuditEntry} from "../types.js" */
/** @import {FieldSpec} from "../forms.js" */

/** @type {FieldSpec[]} the log's filters, as the API names them */
const filters = [
  { name: "actor", label: "Who (email or key prefix)" },
  { name: "actor_kind", label: "Kind of actor", type: "select", options: [["", "Anyone"], ["user", "People"], ["api_key", "API keys"], ["system", "agentline"]] },
  { name: "action", label: "Action (such as agent.update)" },
  { name: "resource_kind", label: "Resource (such as agent)" },
  { name: "from", label: "From", type: "date" },
  { name: "to", label: "To (exclusive)", type: "date" },
];

/** @param {PageContext} ctx */
export async function auditPage(ctx) {
  const p = project();
  logPage(ctx, p.id, `Audit log`, `audit-log-${p.name}.csv`,
    "Every change made in this project through the API and the console, by a person or an API key, newest first. Secrets never appear: a secret that changed shows as [masked].");
}

/** @param {PageContext} ctx */
export async function instanceAuditPage(ctx) {
  logPage(ctx, 0, "Instance audit log", "audit-log-instance.csv",
    "Sign-ins (failed ones with the email tried), accounts made, passwords set and administrators' changes of accounts, newest first.");
}

/**
 * logPage shows the log of the project pid (0: the instance's) with its
 * filters, the CSV of what they select and a button for older entries.
 * @param {PageContext} ctx @param {number} pid @param {string} title @param {string} file @param {string} intro
 */
function logPage({ show }, pid, title, file, intro) {
  /** @type {Record<string, unknown>} */
  let current = {};
  const csv = h("button", { type: "button" }, "Export CSV");
  const csvErr = h("span", { class: "form-error", role: "alert" });
  csv.addEventListener("click", async () => {
    csvErr.textContent = "";
    try {
      await downloadAuditCSV(pid, current, file);
    } catch (e) {
      csvErr.textContent = errorText(e);
    }
  });
  show(title, h("p", { class: "muted" }, intro), h("div", { class: "row" }, csv, csvErr), filtered(filters, async (v) => {
    current = v;
    const rows = h("tbody", {});
    const more = h("button", { type: "button", hidden: true }, "Older entries");
    const load = async (/** @type {string} */ cursor) => {
      const res = await listAuditLog(pid, { ...v, cursor, limit: 50 });
      rows.append(...res.entries.map(entryRow));
      more.hidden = !res.next_cursor;
      more.onclick = () => load(String(res.next_cursor)).catch(alertError);
      return res.entries.length;
    };
    if (!(await load(""))) return h("p", { class: "muted" }, "No entries match.");
    // A wide log scrolls sideways: its region takes the keyboard's focus.
    return [h("div", { class: "table", tabindex: 0, role: "region", "aria-label": "Entries" }, h("table", { class: "audit" }, h("thead", {}, h("tr", {},
      ["When", "Who", "Action", "Resource", "Changes", "From"].map((x) => h("th", { scope: "col" }, x)))), rows)), more];
  }));
}

/** who names an entry's actor. @param {AuditActor} a */
function who(a) {
  if (a.kind === "api_key") return h("span", {}, "API key ", h("code", {}, a.key_prefix || `#${a.id}`));
  if (a.kind === "system") return h("span", { class: "muted" }, "agentline");
  return a.email || `user ${a.id}`;
}

/** changeList shows each changed field as before → after. @param {AuditEntry["changes"]} changes */
function changeList(changes) {
  const names = Object.keys(changes || {}).sort();
  if (!changes || !names.length) return h("span", { class: "muted" }, "—");
  const value = (/** @type {unknown} */ x) => (x === null || x === undefined ? h("span", { class: "muted" }, "none") : h("code", {}, json(x)));
  return h("dl", { class: "changes" }, names.map((n) => [h("dt", {}, n), h("dd", {}, value(changes[n][0]), " → ", value(changes[n][1]))]));
}

/** @param {AuditEntry} e */
function entryRow(e) {
  const res = e.resource.id ? `${e.resource.kind} ${e.resource.id}` : e.resource.kind;
  return h("tr", { "data-entry": e.id },
    h("td", {}, when(e.at)), h("td", {}, who(e.actor)), h("td", {}, h("code", {}, e.action)), h("td", {}, res),
    h("td", {}, changeList(e.changes)), h("td", {}, e.client_ip || ""));
}
