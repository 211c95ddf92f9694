// @ts-check
// Row builders: a list of small records (form fields, tool parameters,
// data to extract) edited as rows of controls, with a JSON mode for what
// the rows cannot say. The controls carry no name, so form()'s values()
// skips them; the page reads the builder with read().

import { h } from "./dom.js";
import { FieldError } from "./forms.js";

/** @import {JSONSchema} from "./types.js" */

/** @typedef {Record<string, string | boolean>} Row one record, by column key */

/**
 * @template {Row} R
 * @typedef {object} Column
 * @property {string} key
 * @property {string} label
 * @property {"text" | "select" | "checkbox"} [type]
 * @property {[string, string][]} [options] a select's
 * @property {string} [placeholder]
 * @property {(row: R) => boolean} [when] the control is enabled only for rows it is true of
 */

/**
 * @template {Row} R
 * @template V
 * @typedef {object} BuilderSpec
 * @property {string} legend the group's name
 * @property {string} field the API field its errors belong to
 * @property {string} noun what one row is ("field", "parameter")
 * @property {Column<R>[]} columns
 * @property {unknown} value the current JSON value
 * @property {(rows: R[]) => V} toJSON
 * @property {(value: any) => R[] | null} fromJSON null for a value the rows cannot hold
 * @property {() => R} blank a new row
 * @property {number} [max] at most this many rows
 * @property {string} [hint]
 */

let builderSeq = 0;

/**
 * cellOf is one cell of a row: its column's control, labelled for the row
 * (label), writing what is entered back into row; changed runs after a
 * select's change (which may enable or disable the row's other controls).
 * @template {Row} R
 * @param {Column<R>} col @param {R} row @param {string} label @param {() => void} changed
 */
function cellOf(col, row, label, changed) {
  const cell = /** @type {Row} */ (row);
  /** @type {HTMLSelectElement | HTMLInputElement} */
  let el;
  if (col.type === "select") {
    const options = col.options || [];
    el = h("select", { "aria-label": label }, options.map(([v, l]) => h("option", { value: v }, l)));
    el.value = String(cell[col.key] ?? options[0][0]);
  } else if (col.type === "checkbox") {
    el = h("input", { type: "checkbox", "aria-label": label });
    el.checked = !!cell[col.key];
  } else {
    el = h("input", { type: "text", "aria-label": label, placeholder: col.placeholder, autocomplete: "off" });
    el.value = String(cell[col.key] ?? "");
  }
  if (col.when && !col.when(row)) el.disabled = true;
  el.dataset.col = col.key;
  const control = el;
  control.addEventListener(col.type === "text" || !col.type ? "input" : "change", () => {
    cell[col.key] = col.type === "checkbox" ? /** @type {HTMLInputElement} */ (control).checked : control.value;
    if (col.type === "select") changed();
  });
  return h("span", { class: "cell" + (col.type === "checkbox" ? " check" : "") }, h("span", { class: "cell-label", "aria-hidden": "true" }, col.label), el);
}

/**
 * rowActions are a row's buttons: up, down (each disabled at its end) and
 * remove, running move(to) and remove().
 * @param {string} noun @param {number} i @param {number} count @param {(to: number) => void} move @param {() => void} remove
 */
function rowActions(noun, i, count, move, remove) {
  const n = i + 1;
  const up = h("button", { type: "button", class: "icon", "data-move": "up", "aria-label": `Move ${noun} ${n} up`, disabled: i === 0 }, "↑");
  const down = h("button", { type: "button", class: "icon", "data-move": "down", "aria-label": `Move ${noun} ${n} down`, disabled: i === count - 1 }, "↓");
  const del = h("button", { type: "button", class: "icon danger", "aria-label": `Remove ${noun} ${n}` }, "✕");
  up.addEventListener("click", () => move(i - 1));
  down.addEventListener("click", () => move(i + 1));
  del.addEventListener("click", remove);
  return h("span", { class: "row-actions" }, up, down, del);
}

/**
 * parseJSON reads a builder's JSON text; empty is null. The API checks
 * what it holds.
 * @param {{field: string, legend: string}} spec @param {string} v
 */
function parseJSON(spec, v) {
  try {
    return v.trim() === "" ? null : JSON.parse(v);
  } catch (e) {
    throw new FieldError(spec.field, `${spec.legend} must be JSON: ${/** @type {Error} */ (e).message}`);
  }
}

/**
 * rowsBuilder builds the editor. It returns {el, read()}: read gives the
 * JSON value or throws FieldError.
 * @template {Row} R
 * @template V
 * @param {BuilderSpec<R, V>} spec
 * @returns {{el: HTMLFieldSetElement, read: () => V}}
 */
export function rowsBuilder(spec) {
  const id = "b" + ++builderSeq;
  const initial = spec.fromJSON(spec.value);
  let jsonMode = initial === null;
  let rows = initial || [];
  const list = h("ol", { class: "builder-rows" });
  const text = h("textarea", { id: id + "-json", rows: 10, class: "mono", "aria-describedby": id + "-err" });
  const jsonBox = h("div", { class: "builder-json" }, h("label", { for: id + "-json" }, spec.legend + " as JSON"), text);
  const err = h("p", { class: "field-error", id: id + "-err", "data-error-for": spec.field });
  const add = h("button", { type: "button" }, "Add " + spec.noun);
  const toggle = h("button", { type: "button", "aria-pressed": "false" }, "Edit as JSON");
  const note = h("p", { class: "hint" });
  /** focus focuses the first control that matches selector in the list (or in row i). @param {string} selector @param {number} [i] */
  const focus = (selector, i) => /** @type {HTMLElement | null | undefined} */ ((i === undefined ? list : list.children[i])?.querySelector(selector))?.focus();

  const draw = () => {
    list.replaceChildren(...rows.map((row, i) => drawRow(row, i)));
    list.hidden = add.hidden = jsonMode;
    jsonBox.hidden = !jsonMode;
    toggle.setAttribute("aria-pressed", String(jsonMode));
    toggle.textContent = jsonMode ? "Edit with the builder" : "Edit as JSON";
    add.disabled = rows.length >= (spec.max || 100);
    if (!jsonMode && !rows.length) list.append(h("li", { class: "muted empty" }, `No ${spec.noun}s yet.`));
  };

  const drawRow = (/** @type {R} */ row, /** @type {number} */ i) => {
    // A new type may enable or disable the row's other controls.
    const changed = () => {
      for (const other of spec.columns) {
        const dep = /** @type {HTMLInputElement | null} */ (list.children[i].querySelector(`[data-col="${other.key}"]`));
        if (other.when && dep) dep.disabled = !other.when(row);
      }
    };
    const cells = spec.columns.map((col) => cellOf(col, row, `${col.label} of ${spec.noun} ${i + 1}`, changed));
    const move = (/** @type {number} */ to) => {
      rows.splice(to, 0, rows.splice(i, 1)[0]);
      draw();
      focus(`button[data-move="${to > i ? "down" : "up"}"]`, to);
    };
    const remove = () => {
      rows.splice(i, 1);
      draw();
      if (!list.querySelector("input, select")) add.focus();
      else focus("input, select");
    };
    return h("li", { class: "builder-row" }, cells, rowActions(spec.noun, i, rows.length, move, remove));
  };

  add.addEventListener("click", () => {
    rows.push(spec.blank());
    draw();
    focus("input, select", rows.length - 1);
  });
  toggle.addEventListener("click", () => {
    err.textContent = note.textContent = "";
    if (!jsonMode) {
      text.value = JSON.stringify(spec.toJSON(rows), null, 2);
      jsonMode = true;
    } else {
      let back;
      try {
        back = spec.fromJSON(parseJSON(spec, text.value));
      } catch (e) {
        err.textContent = /** @type {Error} */ (e).message;
        return;
      }
      if (back === null) {
        err.textContent = `This JSON uses more than the builder can show; keep editing it as JSON.`;
        return;
      }
      rows = back;
      jsonMode = false;
    }
    draw();
    (jsonMode ? text : toggle).focus();
  });

  if (jsonMode) {
    text.value = JSON.stringify(spec.value, null, 2);
    note.textContent = "Shown as JSON: it uses more than the builder's simple types.";
  }
  draw();
  const el = h("fieldset", { class: "field builder", id },
    h("legend", {}, spec.legend), spec.hint ? h("p", { class: "hint" }, spec.hint) : null, note, list, jsonBox,
    h("div", { class: "row" }, add, toggle), err);
  // What the JSON mode holds goes to the API as it is: the API checks it.
  return { el, read: () => (jsonMode ? /** @type {V} */ (parseJSON(spec, text.value)) : spec.toJSON(rows)) };
}

// ---- JSON Schema objects of simple properties ---------------------------

/**
 * @typedef {object} PropertyRow One property of a schema of simple ones.
 * @property {string} name
 * @property {string} type string, number, integer, boolean, or enum (a string of the choices)
 * @property {string} description
 * @property {boolean} required
 * @property {string} options an enum's choices, comma separated
 */

const simpleTypes = ["string", "number", "integer", "boolean"];

/** schemaColumns are a property row's controls; required adds that column. @param {boolean} required @returns {Column<PropertyRow>[]} */
export function schemaColumns(required) {
  /** @type {(Column<PropertyRow> | null)[]} */
  const cols = [
    { key: "name", label: "Name", placeholder: "order_id" },
    { key: "type", label: "Type", type: "select", options: [["string", "Text"], ["number", "Number"], ["integer", "Whole number"], ["boolean", "Yes or no"], ["enum", "One of"]] },
    { key: "description", label: "Description", placeholder: "What it is, for the model" },
    required ? { key: "required", label: "Required", type: "checkbox" } : null,
    { key: "options", label: "Choices", placeholder: "comma, separated", when: (r) => r.type === "enum" },
  ];
  return cols.filter((c) => c !== null);
}

/**
 * schemaFromRows makes {"type":"object","properties":...,"required":[...]}
 * of the rows; no rows is empty (emptyValue).
 * @template E
 * @param {PropertyRow[]} rows @param {E} emptyValue @returns {JSONSchema | E}
 */
export function schemaFromRows(rows, emptyValue) {
  const named = rows.filter((r) => r.name.trim());
  if (!named.length) return emptyValue;
  /** @type {Record<string, JSONSchema>} */
  const properties = {};
  for (const r of named) {
    /** @type {JSONSchema} */
    const p = r.type === "enum" ? { type: "string", enum: splitOptions(r.options) } : { type: r.type };
    if (r.description.trim()) p.description = r.description.trim();
    properties[r.name.trim()] = p;
  }
  /** @type {JSONSchema} */
  const out = { type: "object", properties };
  const required = named.filter((r) => r.required).map((r) => r.name.trim());
  if (required.length) out.required = required;
  return out;
}

/**
 * rowsFromSchema reads a schema of simple properties into rows, or null
 * when it has more (nested objects, arrays, formats): JSON mode shows it.
 * @param {unknown} value @returns {PropertyRow[] | null}
 */
export function rowsFromSchema(value) {
  if (value === null || value === undefined) return [];
  if (typeof value !== "object") return null;
  const schema = /** @type {JSONSchema} */ (value);
  if (schema.type !== "object") return null;
  const extra = Object.keys(schema).filter((k) => !["type", "properties", "required"].includes(k));
  if (extra.length) return null;
  const required = new Set(schema.required || []);
  const rows = [];
  for (const [name, p] of Object.entries(schema.properties || {})) {
    if (!p || typeof p !== "object" || Object.keys(p).some((k) => !["type", "description", "enum"].includes(k))) return null;
    const choices = p.enum;
    if (choices && p.type === "string" && choices.every((x) => typeof x === "string" && !x.includes(","))) {
      rows.push({ name, type: "enum", description: p.description || "", required: required.has(name), options: choices.join(", ") });
    } else if (!choices && p.type && simpleTypes.includes(p.type)) {
      rows.push({ name, type: p.type, description: p.description || "", required: required.has(name), options: "" });
    } else {
      return null;
    }
  }
  return rows;
}

/** @returns {PropertyRow} */
export function blankProperty() {
  return { name: "", type: "string", description: "", required: false, options: "" };
}

/** splitOptions is a comma-separated list's items. @param {unknown} s */
export function splitOptions(s) {
  return String(s || "").split(",").map((x) => x.trim()).filter(Boolean);
}
