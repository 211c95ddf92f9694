// @ts-check
// A form channel's form (lead capture or live chat): its fields with the
// builder (or as JSON), the labels and where submissions are posted; and
// the form as visitors get it, to try.

import { submitForm, updateChannel } from "../api.js";
import { rowsBuilder, splitOptions } from "../builder.js";
import { h } from "../dom.js";
import { form } from "../forms.js";
import { render } from "../router.js";

/** @import {Channel, FormField, FormSettings} from "../types.js" */
/** @import {FieldSpec} from "../forms.js" */

/** @type {[string, string][]} */
const fieldTypes = [["text", "Text"], ["email", "Email"], ["tel", "Phone"], ["textarea", "Long text"], ["select", "Choice"], ["checkbox", "Checkbox"]];

/** @typedef {{name: string, label: string, type: string, required: boolean, options: string}} FieldRow */

/** formFieldsBuilder edits settings.form.fields. @param {FormField[]} fields */
function formFieldsBuilder(fields) {
  return rowsBuilder({
    legend: "Fields", field: "settings.form.fields", noun: "field", max: 30,
    hint: "Name is the answer's key (lower case, a-z, 0-9, _); Choices are a Choice field's options.",
    columns: [
      { key: "label", label: "Label", placeholder: "Your name" },
      { key: "name", label: "Name", placeholder: "name" },
      { key: "type", label: "Type", type: "select", options: fieldTypes },
      { key: "required", label: "Required", type: "checkbox" },
      { key: "options", label: "Choices", placeholder: "comma, separated", when: (r) => r.type === "select" },
    ],
    value: fields || [],
    toJSON: (/** @type {FieldRow[]} */ rows) => rows.map((r) => {
      /** @type {Record<string, unknown>} */
      const out = { name: r.name.trim() || slug(r.label), label: r.label.trim(), type: r.type, required: !!r.required };
      if (r.type === "select") out.options = splitOptions(r.options);
      return out;
    }),
    fromJSON: (/** @type {unknown} */ list) => {
      if (!Array.isArray(list) || list.some((f) => !f || typeof f !== "object" || (f.options || []).some((/** @type {unknown} */ o) => String(o).includes(",")))) return null;
      return list.map((f) => ({ name: f.name || "", label: f.label || "", type: f.type || "text", required: !!f.required, options: (f.options || []).join(", ") }));
    },
    blank: () => ({ name: "", label: "", type: "text", required: false, options: "" }),
  });
}

/** slug turns a label into a field name when none is given. @param {string} label */
function slug(label) {
  const s = String(label || "").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 50);
  return /^[a-z]/.test(s) ? s : s ? "f_" + s.slice(0, 48) : "";
}

/** @type {number | null} the channel whose form was just saved: its page, drawn again, says so */
let savedForm = null;

/**
 * formSettings edits settings.form of a form channel: fields with the
 * builder (or as JSON), the labels and where submissions are posted.
 * @param {Channel} c
 */
export function formSettings(c) {
  const fs = /** @type {FormSettings} */ (c.settings.form);
  // The page is drawn again after a save (the mode decides the key and the
  // snippets), so "Saved." waits for it.
  const saved = h("p", { role: "status", class: "muted" }, savedForm === c.id ? "Saved." : "");
  savedForm = null;
  const fields = formFieldsBuilder(fs.fields);
  const card = h("div", { class: "card" }, h("h2", {}, "Form"), form([
    { name: "settings.form.mode", label: "Mode", type: "select", options: [["lead_capture", "Lead capture: store the submissions"], ["live_chat", "Live chat: connect the visitor to the agent"]], value: fs.mode },
    fields.el,
    { name: "settings.form.submit_label", label: "Submit button", value: fs.submit_label || "" },
    { name: "settings.form.thank_you_message", label: "Thank-you message", value: fs.thank_you_message || "" },
    { name: "settings.form.notify_url", label: "Notify URL", type: "url", value: fs.notify_url || "", hint: "Optional; each lead is posted there." },
  ], "Save form", async (v) => {
    v.settings.form.fields = fields.read() || [];
    await updateChannel(c.id, { settings: v.settings });
    savedForm = c.id;
    render();
  }, { label: "Form settings", extra: saved, need: "create" }));
  return fs.mode === "lead_capture" ? [card, tryForm(c, fs)] : card;
}

/**
 * tryForm is the channel's form as visitors get it, posted to the public
 * submit endpoint: a way to check the fields, whose answer is a real lead.
 * @param {Channel} c @param {FormSettings} fs
 */
function tryForm(c, fs) {
  const result = h("p", { role: "status", class: "muted" });
  /** @type {[string, string][]} */
  const choose = [["", "Choose…"]];
  return h("div", { class: "card" }, h("h2", {}, "Try the form"),
    h("p", { class: "muted" }, "Sent like a visitor's submission: it is stored as a lead (and posted to the notify URL)."),
    form(fs.fields.map((fd) => /** @type {FieldSpec} */ ({
      name: fd.name, label: fd.label + (fd.required ? " *" : ""), required: fd.required,
      type: fd.type === "select" ? "select" : fd.type === "textarea" ? "textarea" : fd.type,
      options: fd.type === "select" ? choose.concat((fd.options || []).map((o) => [o, o])) : undefined,
      value: fd.type === "select" ? "" : undefined,
    })), fs.submit_label, async (v) => {
      result.textContent = "";
      const sent = await submitForm(c.id, v);
      result.textContent = `${fs.thank_you_message} (lead ${sent.lead_id})`;
    }, { label: "Try the form", extra: result }));
}
