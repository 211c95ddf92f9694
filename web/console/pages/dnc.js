// @ts-check
// The project's do-not-call list, on the Campaigns page: the numbers no
// campaign of the project dials, a page at a time, with a form to add one
// (editors and owners) and Remove (owners, asking first).

import { addDoNotCall, listDoNotCall, removeDoNotCall } from "../api.js";
import { h, confirmAction, when, alertError, errorText } from "../dom.js";
import { form } from "../forms.js";
import { can, project } from "../router.js";

/** @import {DoNotCall} from "../types.js" */

/** How many numbers a page of the list holds. */
export const DNC_PAGE = 25;

/** dncCard is the do-not-call list's card, its first page loaded. */
export async function dncCard() {
  const pid = project().id;
  const said = h("p", { role: "status", class: "muted", id: "dnc-said" });
  const rows = h("tbody", {});
  const list = h("div", { class: "table" }, h("table", { id: "dnc-list" }, h("caption", { class: "sr-only" }, "Numbers on the do-not-call list"),
    h("thead", {}, h("tr", {}, ["Number", "Reason", "Added", ""].map((x) => h("th", { scope: "col" }, x || h("span", { class: "sr-only" }, "Actions"))))), rows));
  const empty = h("p", { class: "muted" }, "No numbers on the list.");
  const more = h("button", { type: "button", hidden: true }, "More numbers");

  /** @param {DoNotCall} e */
  const row = (e) => {
    /** @type {HTMLButtonElement | null} */
    let remove = null;
    if (can("delete")) {
      const b = h("button", { type: "button", class: "danger" }, "Remove", h("span", { class: "sr-only" }, " " + e.phone_number));
      b.addEventListener("click", async () => {
        if (!(await confirmAction(`Take ${e.phone_number} off the do-not-call list? Later uploads of it are called; contacts already marked do not call stay so.`,
          "Remove number"))) return;
        try {
          await removeDoNotCall(pid, e.phone_number);
          said.textContent = `${e.phone_number} is off the list.`;
          await load(null);
        } catch (err) {
          said.textContent = errorText(err);
        }
      });
      remove = b;
    }
    return h("tr", { "data-number": e.phone_number }, h("td", {}, e.phone_number), h("td", {}, e.reason || "—"),
      h("td", {}, when(e.created_at)), h("td", { class: "actions" }, remove));
  };

  /** load reads a page: the first (cursor null) in place of what is shown, or the next after it. @param {string | null} cursor */
  const load = async (cursor) => {
    const page = await listDoNotCall(pid, { limit: DNC_PAGE, cursor });
    if (!cursor) rows.replaceChildren();
    rows.append(...page.items.map(row));
    more.hidden = !page.next_cursor;
    more.onclick = () => load(page.next_cursor).catch(alertError);
    list.hidden = !rows.childElementCount;
    empty.hidden = !list.hidden;
  };
  await load(null);

  const add = can("create") ? form([
    { name: "phone_number", label: "Phone number", type: "tel", required: true, placeholder: "+14155550123", autocomplete: "off",
      hint: "International form: + and the country code; spaces and dashes are fine." },
    { name: "reason", label: "Reason", placeholder: "Asked by email", hint: "Why, for the record (optional)." },
  ], "Add number", async (v, f) => {
    const e = await addDoNotCall(pid, { phone_number: v.phone_number, reason: v.reason });
    said.textContent = `${e.phone_number} is on the list.`;
    f.reset();
    await load(null);
  }, { label: "Add to the do-not-call list" }) : null;

  return h("section", { class: "card", id: "dnc", "aria-labelledby": "dnc-title" }, h("h2", { id: "dnc-title" }, "Do-not-call list"),
    h("p", { class: "muted" }, "No campaign of this project dials these numbers. A number added here marks its waiting contacts do not call at once; ",
      "taking it off lets later uploads call it."),
    said, empty, list, more, add);
}
