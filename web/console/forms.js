// @ts-check
// Forms: labelled fields, reading them into an object, submitting with
// the API's error shown next to the field it names, read-only forms for a
// role that may not change them, and filter forms over a list.

import { APIError, listAgents, listChannels } from "./api.js";
import { h, flat } from "./dom.js";
import { can, project } from "./router.js";

/** @import {Child} from "./dom.js" */
/** @import {Agent} from "./types.js" */

/**
 * @typedef {object} FieldSpec One labelled field. Names may be dotted
 * (settings.color): values() nests them, and an API error naming that
 * field is shown under it.
 * @property {string} name
 * @property {string} label
 * @property {string} [type] an input's type, or textarea, lines (a list, one a line), select
 * @property {string | number | boolean | string[] | null} [value]
 * @property {[string, string][]} [options] a select's [value, label]s
 * @property {string} [hint]
 * @property {boolean} [required]
 * @property {string} [placeholder]
 * @property {string} [autocomplete]
 * @property {number | string} [min] a number's least value, or a date's first day (YYYY-MM-DD)
 * @property {number | string} [step] a number field's step ("any" for fractions)
 * @property {string} [list]
 * @property {string} [inputmode]
 * @property {number} [rows]
 */

/**
 * @typedef {Record<string, any>} FormValues A form's values by name, dotted
 * names nested: as loose as the forms built at run time (a number field
 * reads as a number or null, a checkbox as a boolean, lines as a list).
 */

let fieldSeq = 0;

/** input builds one labelled field. @param {FieldSpec} spec */
export function input(spec) {
  const id = "f" + ++fieldSeq;
  const type = spec.type || "text";
  /** @type {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} */
  let el;
  if (type === "textarea" || type === "lines") {
    el = h("textarea", { id, name: spec.name, rows: spec.rows || 4, placeholder: spec.placeholder, required: spec.required });
    el.value = type === "lines" ? (/** @type {string[]} */ (spec.value) || []).join("\n") : String(spec.value ?? "");
  } else if (type === "select") {
    const options = spec.options || [];
    el = h("select", { id, name: spec.name, required: spec.required }, options.map(([v, l]) => h("option", { value: v }, l)));
    el.value = String(spec.value ?? (options[0] ? options[0][0] : ""));
  } else if (type === "checkbox") {
    el = h("input", { id, name: spec.name, type: "checkbox" });
    el.checked = !!spec.value;
  } else {
    el = h("input", { id, name: spec.name, type, placeholder: spec.placeholder, required: spec.required,
      autocomplete: spec.autocomplete, min: spec.min, step: spec.step, list: spec.list, inputmode: spec.inputmode });
    el.value = String(spec.value ?? "");
  }
  el.dataset.kind = type;
  const err = h("p", { class: "field-error", id: id + "-err", "data-error-for": spec.name });
  el.setAttribute("aria-describedby", id + "-err" + (spec.hint ? " " + id + "-hint" : ""));
  const hint = spec.hint ? h("p", { class: "hint", id: id + "-hint" }, spec.hint) : null;
  if (type === "checkbox") return h("div", { class: "field" }, h("label", { class: "check", for: id }, el, spec.label), hint, err);
  return h("div", { class: "field" }, h("label", { for: id }, spec.label), el, hint, err);
}

/** values reads a form's named fields into an object, nesting dotted names. @param {HTMLElement} form @returns {FormValues} */
export function values(form) {
  /** @type {FormValues} */
  const out = {};
  const named = /** @type {NodeListOf<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>} */ (form.querySelectorAll("[name]"));
  for (const el of named) {
    let v;
    switch (el.dataset.kind) {
      case "checkbox": v = /** @type {HTMLInputElement} */ (el).checked; break;
      case "number": v = el.value.trim() === "" ? null : Number(el.value); break;
      case "lines": v = el.value.split("\n").map((l) => l.trim()).filter(Boolean); break;
      default: v = el.value;
    }
    const path = el.name.split(".");
    let o = out;
    for (const p of path.slice(0, -1)) o = o[p] = o[p] || {};
    o[path[path.length - 1]] = v;
  }
  return out;
}

/**
 * readOnly shows a form to a role that may not change it: its controls
 * disabled, its buttons hidden, and a line saying who may.
 * @param {HTMLFormElement} f
 */
export function readOnly(f) {
  for (const el of f.querySelectorAll("input, select, textarea")) /** @type {HTMLInputElement} */ (el).disabled = true;
  for (const b of f.querySelectorAll("button")) b.hidden = true;
  f.prepend(h("p", { class: "muted" }, "You are a viewer here: you can read this; editors and owners change it."));
  return f;
}

/**
 * @typedef {object} FormOptions
 * @property {string} [label] the form's name (aria-label); the submit button's text without it
 * @property {Child} [extra] what follows the submit button
 * @property {boolean} [danger]
 * @property {"create" | "delete"} [need] a role without it gets the form read-only
 */

/**
 * form builds a form of fields whose submit runs onSubmit(values). An API
 * error goes under the field it names, or above the buttons.
 * @param {(FieldSpec | Node)[]} fields @param {string} submitLabel
 * @param {(v: FormValues, f: HTMLFormElement) => unknown} onSubmit @param {FormOptions} [opts]
 */
export function form(fields, submitLabel, onSubmit, opts = {}) {
  const formError = h("p", { class: "form-error", role: "alert" });
  const submit = h("button", { type: "submit", class: opts.danger ? "danger primary" : "primary" }, submitLabel);
  const f = h("form", { novalidate: true, "aria-label": opts.label || submitLabel },
    fields.map((x) => (x instanceof Node ? x : input(x))),
    h("div", { class: "actions" }, submit, opts.extra, formError));
  f.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearErrors(f);
    submit.disabled = true;
    try {
      await onSubmit(values(f), f);
    } catch (err) {
      showError(f, err);
    } finally {
      submit.disabled = false;
    }
  });
  return opts.need && !can(opts.need) ? readOnly(f) : f;
}

/** @param {HTMLFormElement} f */
function clearErrors(f) {
  for (const e of f.querySelectorAll(".field-error, .form-error")) e.textContent = "";
  for (const e of f.querySelectorAll("[aria-invalid]")) e.removeAttribute("aria-invalid");
}

/**
 * showError puts an error's message next to its field, or each message of
 * error.fields next to its own field, focusing the first; what has no field
 * in the form goes to the form's foot.
 * @param {HTMLFormElement} f @param {unknown} err
 */
function showError(f, err) {
  if (!(err instanceof APIError) && !(err instanceof FieldError)) console.error(err);
  const e = /** @type {{message?: string, field?: string, fields?: Record<string, string> | null}} */ (Object(err));
  const msg = e.message || String(err);
  const problems = e.fields ? Object.entries(e.fields) : [[e.field || "", msg]];
  const rest = [];
  /** @type {HTMLElement | null} */
  let first = null;
  for (const [name, text] of problems) {
    const el = markField(f, name, text);
    if (!el) rest.push(e.fields ? `${name}: ${text}` : text);
    // The first in the page's order, whatever order the messages came in.
    if (el && (!first || first.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING)) first = el;
  }
  if (first) first.focus();
  /** @type {HTMLElement} */ (f.querySelector(".form-error")).textContent = rest.join("; ");
}

/**
 * markField shows text under the field an API name points at and returns
 * its control, or null. The name matches exactly (without list indexes:
 * allowed_origins[2] is the allowed_origins field), or a field whose name
 * ends in it, or a field it lies inside (settings.form.fields[1].name is
 * the settings.form.fields field).
 * @param {HTMLFormElement} f @param {string} name @param {string} text
 * @returns {HTMLElement | null}
 */
function markField(f, name, text) {
  const field = name.replace(/\[\d+\]/g, "");
  if (!field) return null;
  const slots = [.../** @type {NodeListOf<HTMLElement>} */ (f.querySelectorAll("[data-error-for]"))];
  const of = (/** @type {HTMLElement} */ s) => s.dataset.errorFor || "";
  const slot = slots.find((s) => of(s) === field) ||
    slots.find((s) => of(s).endsWith("." + field) || field.endsWith("." + of(s))) ||
    slots.find((s) => field.startsWith(of(s) + "."));
  if (!slot) return null;
  slot.textContent = text;
  // A builder's controls have no name: its first control takes the focus;
  // so does the first of a group's (a fieldset of checkboxes).
  const el = /** @type {HTMLElement | null} */ (f.querySelector(`[name="${CSS.escape(of(slot))}"]`) ||
    slot.closest(".builder")?.querySelector(".builder-json:not([hidden]) textarea, .builder-rows:not([hidden]) input, .builder-rows:not([hidden]) select") ||
    slot.closest("fieldset")?.querySelector("input, select, textarea"));
  if (el) el.setAttribute("aria-invalid", "true");
  return el;
}

/** FieldError is a check made in the browser before the API is asked. */
export class FieldError extends Error {
  /** @param {string} field @param {string} message */
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

// ---- filtered lists ------------------------------------------------------

/**
 * agentOptions are a select's options of agents, after a first "none"
 * option when it is named.
 * @param {Agent[]} agents @param {string | null} [none] @returns {[string, string][]}
 */
export function agentOptions(agents, none) {
  /** @type {[string, string][]} */
  const first = none ? [["", none]] : [];
  return first.concat(agents.map((a) => [String(a.id), a.name]));
}

/** filterSelects are the project's channels and agents, and a filter field of each. */
export async function filterSelects() {
  const pid = project().id;
  const [channels, agents] = await Promise.all([listChannels(pid), listAgents(pid)]);
  /** @type {[string, string][]} */
  const channelOptions = [["", "All channels"]];
  return {
    channels, agents,
    /** @type {FieldSpec} */
    channel: { name: "channel_id", label: "Channel", type: "select", options: channelOptions.concat(channels.map((c) => [String(c.id), c.name || `Channel ${c.id}`])) },
    /** @type {FieldSpec} */
    agent: { name: "agent_id", label: "Agent", type: "select", options: agentOptions(agents, "All agents") },
  };
}

/**
 * filtered shows a filter form and a result list under it; run(values)
 * returns the list's nodes.
 * @param {FieldSpec[]} fields @param {(v: FormValues) => Promise<Child>} run
 */
export function filtered(fields, run) {
  const out = h("div", { "aria-live": "polite" });
  const f = form(fields, "Apply filters", async (v) => out.replaceChildren(...flat([await run(v)])), { label: "Filters" });
  f.classList.add("card", "filters");
  // The first results come without a click (requestSubmit needs the form
  // in the document, which it is not yet).
  f.dispatchEvent(new Event("submit", { cancelable: true }));
  return [f, out];
}
