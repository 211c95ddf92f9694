// @ts-check
// A campaign's contacts: a CSV upload (the file read in the browser and
// its first rows shown before anything is sent; then the server's answer,
// with the rows it refused by line), and the list with its status filter,
// "More contacts" paging by cursor, links to each contact's conversations
// and contacts.csv.

import { downloadContactsCSV, listContacts, uploadContacts } from "../api.js";
import { h, notice, plural, when, alertError, errorText } from "../dom.js";
import { FieldError, filtered, form } from "../forms.js";
import { CONTACT_STATUSES } from "./campaigns.js";

/** @import {Campaign, CampaignContact, ContactStatus, ContactUpload} from "../types.js" */
/** @import {Child} from "../dom.js" */

/** How many contacts a page of the list holds. */
export const PAGE = 25;
/** How many rows of a chosen file the preview shows. */
const PREVIEW = 5;

/** @typedef {{line: number, cells: string[]}} CSVRecord a record of a CSV file and the line it starts on */

/**
 * parseCSV reads CSV text as the server does, minimally (RFC 4180: cells in
 * double quotes may hold commas, doubled quotes and line breaks; LF or CRLF
 * line ends; a UTF-8 byte order mark): its records, each with the line it
 * starts on (the header is line 1), blank rows skipped. It never refuses:
 * the server is the judge, this is for the preview and for showing the
 * rows the server refused.
 * @param {string} text @returns {CSVRecord[]}
 */
export function parseCSV(text) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  /** @type {CSVRecord[]} */
  const out = [];
  /** @type {string[]} */
  let cells = [];
  let cell = "", quoted = false, line = 1, start = 1;
  const end = () => {
    cells.push(cell);
    if (cells.some((x) => x.trim() !== "")) out.push({ line: start, cells });
    cells = [];
    cell = "";
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else {
        if (ch === "\n") line++;
        cell += ch;
      }
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      cells.push(cell);
      cell = "";
    } else if (ch === "\n" || (ch === "\r" && text[i + 1] !== "\n")) {
      end();
      start = ++line;
    } else if (ch !== "\r") cell += ch;
  }
  if (cell !== "" || cells.length) end();
  return out;
}

/**
 * grid is a table in a box that scrolls sideways when it is wider than
 * its card: a region the keyboard can reach (tabindex) to scroll it.
 * @param {string[]} heads @param {HTMLTableSectionElement} body @param {string} id @param {string} caption
 */
function grid(heads, body, id, caption) {
  return h("div", { class: "table", tabindex: 0, role: "region", "aria-label": caption }, h("table", { id }, h("caption", { class: "sr-only" }, caption),
    h("thead", {}, h("tr", {}, heads.map((x) => h("th", { scope: "col" }, x || "(no name)")))), body));
}

/** preview shows a chosen file's header and first rows, before it is sent. @param {string} name @param {CSVRecord[]} records */
function preview(name, records) {
  if (!records.length) return notice(`${name} is empty.`, "error");
  const [head, ...rows] = records;
  const phone = head.cells.some((x) => x.trim().toLowerCase() === "phone_number");
  const shown = rows.slice(0, PREVIEW);
  return [
    h("p", { id: "csv-preview-summary" }, `${name}: ${plural(rows.length, "row")} under the header`,
      rows.length > PREVIEW ? `, the first ${PREVIEW} shown` : "", ". Nothing is stored until you upload it."),
    phone ? null : notice("The header has no phone_number column, so the server will refuse the file: its first line must name the columns, such as phone_number,first_name.", "error"),
    grid(["Line", ...head.cells], h("tbody", {}, shown.map((r) => h("tr", {}, h("td", {}, r.line), r.cells.map((x) => h("td", {}, x))))), "csv-preview",
      `The first rows of ${name}`),
  ];
}

/**
 * uploadAnswer shows the server's answer: contacts added (and of them on
 * the do-not-call list), duplicates skipped, and each refused row with
 * its line, its cells (from the file, as read here) and why.
 * @param {ContactUpload} res @param {CSVRecord[]} records
 */
function uploadAnswer(res, records) {
  const cells = new Map(records.map((r) => [r.line, r.cells.join(", ")]));
  /** @type {[string, string, number][]} */
  const totals = [["added", "Added", res.added], ["do_not_call", "Of them on the do-not-call list", res.do_not_call],
    ["duplicates", "Duplicates skipped", res.duplicates], ["errors", "Rows in error", res.errors.length]];
  return [
    notice(res.errors.length ? `Uploaded, with ${plural(res.errors.length, "row")} in error: fix them and upload those rows again.` : "Uploaded.",
      res.errors.length ? "" : "ok"),
    h("dl", { class: "facts", id: "upload-totals" }, totals.map(([k, l, n]) => [h("dt", {}, l), h("dd", { "data-total": k }, n)])),
    res.errors.length ? grid(["Line", "Row", "Problem"], h("tbody", {}, res.errors.map((e) => h("tr", { "data-line": e.line },
      h("td", {}, e.line), h("td", {}, h("code", {}, cells.get(e.line) || "")), h("td", {}, e.message)))), "upload-errors", "Rows in error") : null,
  ];
}

/**
 * uploadCard uploads a CSV file of contacts: chosen, read and previewed
 * here, sent as it is (text/csv), then the answer shown and done() run.
 * @param {Campaign} c @param {() => Promise<void>} done
 */
export function uploadCard(c, done) {
  const file = h("input", { type: "file", id: "contacts-file", name: "csv", accept: ".csv,text/csv", "aria-describedby": "contacts-file-err contacts-file-hint" });
  const shown = h("div", { id: "csv-preview-box" });
  const answer = h("div", { id: "upload-answer" });
  /** @type {{file: File, records: CSVRecord[]} | null} */
  let chosen = null;
  file.addEventListener("change", async () => {
    chosen = null;
    answer.replaceChildren();
    shown.replaceChildren();
    const f = file.files && file.files[0];
    if (!f) return;
    try {
      chosen = { file: f, records: parseCSV(await f.text()) };
      shown.replaceChildren(...[preview(f.name, chosen.records)].flat().filter((x) => x !== null));
    } catch (e) {
      shown.replaceChildren(notice(errorText(e), "error"));
    }
  });
  const field = h("div", { class: "field" }, h("label", { for: file.id }, "CSV file"), file,
    h("p", { class: "hint", id: "contacts-file-hint" }, "A header row naming a phone_number column (international form, such as +14155550123); ",
      "optional timezone, consent_source and consent_at columns; every other column is a variable for the agent's {{placeholders}}."),
    h("p", { class: "field-error", id: "contacts-file-err", "data-error-for": "csv" }));
  const f = form([field, shown], "Upload contacts", async () => {
    if (!chosen) throw new FieldError("csv", "Choose a CSV file first.");
    const res = await uploadContacts(c.id, chosen.file);
    answer.replaceChildren(...uploadAnswer(res, chosen.records).filter((x) => x !== null));
    file.value = "";
    chosen = null;
    shown.replaceChildren();
    await done();
  }, { label: "Upload contacts" });
  return h("section", { class: "card", id: "upload" }, h("h2", {}, "Upload contacts"), f, answer);
}

/** @type {Record<ContactStatus, string>} the status pill's class of a contact's status */
const pill = { pending: "pending", calling: "live", completed: "ended", voicemail: "warn", busy: "warn", no_answer: "warn",
  failed: "failed", opted_out: "bad", do_not_call: "bad" };
const words = new Map(CONTACT_STATUSES);

/** outcome says how a contact's last dial ended, with its analysis. @param {CampaignContact} ct */
function outcome(ct) {
  const o = ct.last_outcome;
  if (!o) return ct.status === "pending" && ct.next_attempt_at ? h("span", { class: "muted" }, "Not dialed yet") : "—";
  const success = o.success === true ? ", a success" : o.success === false ? ", not a success" : "";
  return [(words.get(/** @type {ContactStatus} */ (o.outcome)) || o.outcome || "live") + success, o.summary ? h("div", { class: "muted" }, o.summary) : null];
}

/** contactRow is a contact's row, its conversations linked. @param {CampaignContact} ct */
function contactRow(ct) {
  const vars = Object.entries(ct.variables || {}).map(([k, v]) => `${k}: ${v}`).join(", ");
  const convs = ct.conversation_ids || [];
  /** @type {Child} */
  const links = convs.length ? h("ul", { class: "plain" }, convs.map((id) => h("li", {}, h("a", { href: `#/conversations/${id}` }, id)))) : "—";
  return h("tr", { "data-contact": ct.id, "data-phone": ct.phone_number },
    h("td", {}, ct.phone_number, ct.timezone ? h("div", { class: "muted" }, ct.timezone) : null),
    h("td", {}, h("span", { class: "status " + (pill[ct.status] || "") }, words.get(ct.status) || ct.status)),
    h("td", { class: "num" }, ct.attempts, ct.status === "pending" && ct.attempts && ct.next_attempt_at ? h("div", { class: "muted" }, "next " + when(ct.next_attempt_at)) : null),
    h("td", {}, vars || "—"), h("td", {}, outcome(ct)), h("td", {}, links));
}

/** contactList is a campaign's contacts of a status (or all), a page at a time. @param {number} id @param {string} status */
async function contactList(id, status) {
  const rows = h("tbody", {});
  const more = h("button", { type: "button", hidden: true }, "More contacts");
  /** @param {string | null} cursor */
  const load = async (cursor) => {
    const page = await listContacts(id, { status, limit: PAGE, cursor });
    rows.append(...page.contacts.map(contactRow));
    more.hidden = !page.next_cursor;
    more.onclick = () => load(page.next_cursor).catch(alertError);
    return page.contacts.length;
  };
  if (!(await load(null))) return h("p", { class: "muted" }, status ? "No contacts with this status." : "No contacts yet.");
  return [grid(["Number", "Status", "Attempts", "Variables", "Last outcome", "Conversations"], rows, "contact-list", "Contacts"), more];
}

/**
 * contactsCard is the contacts list with its status filter and the
 * download of contacts.csv (the contacts the filter selects); reload
 * reads it again (after an upload).
 * @param {Campaign} c
 */
export function contactsCard(c) {
  let status = "";
  const err = h("span", { class: "form-error", role: "alert" });
  const csv = h("button", { type: "button" }, "Download contacts.csv");
  csv.addEventListener("click", async () => {
    err.textContent = "";
    try {
      await downloadContactsCSV(c.id, { status }, `campaign-${c.id}-contacts.csv`);
    } catch (e) {
      err.textContent = errorText(e);
    }
  });
  const [filters, list] = filtered([{ name: "status", label: "Status", type: "select", options: [["", "All statuses"], ...CONTACT_STATUSES] }],
    async (v) => {
      status = v.status;
      return contactList(c.id, status);
    });
  filters.classList.remove("card");
  const node = h("section", { class: "card", id: "contacts" }, h("h2", {}, "Contacts"),
    h("div", { class: "row" }, csv, err), filters, list);
  return { node, reload: () => /** @type {HTMLFormElement} */ (filters).requestSubmit() };
}
