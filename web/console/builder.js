// Row builders: a list of small records (form fields, tool parameters,
// data to extract) edited as rows of controls, with a JSON mode for what
// the rows cannot say. The controls carry no name, so form()'s values()
// skips them; the page reads the builder with read().

import { h, FieldError } from "./ui.js";

let builderSeq = 0;

// rowsBuilder builds the editor. spec:
//   legend: the group's name; field: the API field its errors belong to
//   noun: what one row is ("field", "parameter")
//   columns: [{key, label, type: "text"|"select"|"checkbox", options, placeholder, when(row)}]
//     (when: the control is enabled only for rows it is true of)
//   value: the current JSON value; toJSON(rows) and fromJSON(value) convert,
//     fromJSON returning null for a value the rows cannot hold
//   blank(): a new row; max: at most this many rows; hint
// It returns {el, read()}: read gives the JSON value or throws FieldError.
export function rowsBuilder(spec) {
  const id = "b" + ++builderSeq;
  let rows = spec.fromJSON(spec.value);
  let jsonMode = rows === null;
  if (rows === null) rows = [];
  const list = h("ol", { class: "builder-rows" });
  const text = h("textarea", { id: id + "-json", rows: 10, class: "mono", "aria-describedby": id + "-err" });
  const jsonBox = h("div", { class: "builder-json" }, h("label", { for: id + "-json" }, spec.legend + " as JSON"), text);
  const err = h("p", { class: "field-error", id: id + "-err", "data-error-for": spec.field });
  const add = h("button", { type: "button" }, "Add " + spec.noun);
  const toggle = h("button", { type: "button", "aria-pressed": "false" }, "Edit as JSON");
  const note = h("p", { class: "hint" });

  const draw = () => {
    list.replaceChildren(...rows.map((row, i) => drawRow(row, i)));
    list.hidden = add.hidden = jsonMode;
    jsonBox.hidden = !jsonMode;
    toggle.setAttribute("aria-pressed", String(jsonMode));
    toggle.textContent = jsonMode ? "Edit with the builder" : "Edit as JSON";
    add.disabled = rows.length >= (spec.max || 100);
    if (!jsonMode && !rows.length) list.append(h("li", { class: "muted empty" }, `No ${spec.noun}s yet.`));
  };

  const drawRow = (row, i) => {
    const n = i + 1;
    const cells = spec.columns.map((col) => {
      let el;
      const aria = `${col.label} of ${spec.noun} ${n}`;
      if (col.type === "select") {
        el = h("select", { "aria-label": aria }, col.options.map(([v, l]) => h("option", { value: v }, l)));
        el.value = row[col.key] ?? col.options[0][0];
      } else if (col.type === "checkbox") {
        el = h("input", { type: "checkbox", "aria-label": aria });
        el.checked = !!row[col.key];
      } else {
        el = h("input", { type: "text", "aria-label": aria, placeholder: col.placeholder, autocomplete: "off" });
        el.value = row[col.key] ?? "";
      }
      if (col.when && !col.when(row)) el.disabled = true;
      el.dataset.col = col.key;
      el.addEventListener(col.type === "text" || !col.type ? "input" : "change", () => {
        row[col.key] = col.type === "checkbox" ? el.checked : el.value;
        // A new type may enable or disable the row's other controls.
        if (col.type === "select") {
          for (const other of spec.columns.filter((c) => c.when)) {
            list.children[i].querySelector(`[data-col="${other.key}"]`).disabled = !other.when(row);
          }
        }
      });
      return h("span", { class: "cell" + (col.type === "checkbox" ? " check" : "") }, h("span", { class: "cell-label", "aria-hidden": "true" }, col.label), el);
    });
    const move = (to) => {
      rows.splice(to, 0, rows.splice(i, 1)[0]);
      draw();
      list.children[to].querySelector(`button[data-move="${to > i ? "down" : "up"}"]`)?.focus();
    };
    const up = h("button", { type: "button", class: "icon", "data-move": "up", "aria-label": `Move ${spec.noun} ${n} up`, disabled: i === 0 }, "↑");
    const down = h("button", { type: "button", class: "icon", "data-move": "down", "aria-label": `Move ${spec.noun} ${n} down`, disabled: i === rows.length - 1 }, "↓");
    const remove = h("button", { type: "button", class: "icon danger", "aria-label": `Remove ${spec.noun} ${n}` }, "✕");
    up.addEventListener("click", () => move(i - 1));
    down.addEventListener("click", () => move(i + 1));
    remove.addEventListener("click", () => {
      rows.splice(i, 1);
      draw();
      (list.querySelector("input, select") || add).focus();
    });
    return h("li", { class: "builder-row" }, cells, h("span", { class: "row-actions" }, up, down, remove));
  };

  add.addEventListener("click", () => {
    rows.push(spec.blank());
    draw();
    list.lastElementChild.querySelector("input, select").focus();
  });
  toggle.addEventListener("click", () => {
    err.textContent = note.textContent = "";
    if (!jsonMode) {
      text.value = JSON.stringify(spec.toJSON(rows), null, 2);
      jsonMode = true;
    } else {
      let parsed;
      try {
        parsed = parse(text.value);
      } catch (e) {
        err.textContent = e.message;
        return;
      }
      const back = spec.fromJSON(parsed);
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

  const parse = (v) => {
    try {
      return v.trim() === "" ? null : JSON.parse(v);
    } catch (e) {
      throw new FieldError(spec.field, `${spec.legend} must be JSON: ${e.message}`);
    }
  };

  if (jsonMode) {
    text.value = JSON.stringify(spec.value, null, 2);
    note.textContent = "Shown as JSON: it uses more than the builder's simple types.";
  }
  draw();
  const el = h("fieldset", { class: "field builder", id },
    h("legend", {}, spec.legend), spec.hint ? h("p", { class: "hint" }, spec.hint) : null, note, list, jsonBox,
    h("div", { class: "row" }, add, toggle), err);
  return { el, read: () => (jsonMode ? parse(text.value) : spec.toJSON(rows)) };
}

// ---- JSON Schema objects of simple properties ---------------------------

const simpleTypes = ["string", "number", "integer", "boolean"];

// schemaColumns are a property row's controls; required adds that column.
export function schemaColumns(required) {
  return [
    { key: "name", label: "Name", placeholder: "order_id" },
    { key: "type", label: "Type", type: "select", options: [["string", "Text"], ["number", "Number"], ["integer", "Whole number"], ["boolean", "Yes or no"], ["enum", "One of"]] },
    { key: "description", label: "Description", placeholder: "What it is, for the model" },
    required ? { key: "required", label: "Required", type: "checkbox" } : null,
    { key: "options", label: "Choices", placeholder: "comma, separated", when: (r) => r.type === "enum" },
  ].filter(Boolean);
}

// schemaFromRows makes {"type":"object","properties":...,"required":[...]}
// of the rows; no rows is empty (emptyValue).
export function schemaFromRows(rows, emptyValue) {
  const named = rows.filter((r) => r.name.trim());
  if (!named.length) return emptyValue;
  const properties = {};
  for (const r of named) {
    const p = r.type === "enum" ? { type: "string", enum: splitOptions(r.options) } : { type: r.type };
    if (r.description.trim()) p.description = r.description.trim();
    properties[r.name.trim()] = p;
  }
  const out = { type: "object", properties };
  const required = named.filter((r) => r.required).map((r) => r.name.trim());
  if (required.length) out.required = required;
  return out;
}

// rowsFromSchema reads a schema of simple properties into rows, or null
// when it has more (nested objects, arrays, formats): JSON mode shows it.
export function rowsFromSchema(schema) {
  if (schema === null || schema === undefined) return [];
  if (typeof schema !== "object" || schema.type !== "object") return null;
  const extra = Object.keys(schema).filter((k) => !["type", "properties", "required"].includes(k));
  if (extra.length) return null;
  const required = new Set(schema.required || []);
  const rows = [];
  for (const [name, p] of Object.entries(schema.properties || {})) {
    if (!p || typeof p !== "object" || Object.keys(p).some((k) => !["type", "description", "enum"].includes(k))) return null;
    if (p.enum && p.type === "string" && p.enum.every((x) => typeof x === "string" && !x.includes(","))) {
      rows.push({ name, type: "enum", description: p.description || "", required: required.has(name), options: p.enum.join(", ") });
    } else if (!p.enum && simpleTypes.includes(p.type)) {
      rows.push({ name, type: p.type, description: p.description || "", required: required.has(name), options: "" });
    } else {
      return null;
    }
  }
  return rows;
}

export function blankProperty() {
  return { name: "", type: "string", description: "", required: false, options: "" };
}

export function splitOptions(s) {
  return String(s || "").split(",").map((x) => x.trim()).filter(Boolean);
}
