// Editors of the agent page and the form channel: the agent's settings
// with pickers fed by GET /api/catalog, its analysis and recording; its
// webhook tools (create and edit) with a parameters builder; a form
// channel's fields. Each builder has a JSON mode for what it cannot show.

import { h, api, hooks, form, input, confirmAction, notice, when, can } from "./ui.js";
import { rowsBuilder, schemaColumns, schemaFromRows, rowsFromSchema, blankProperty, splitOptions } from "./builder.js";

// catalog is the server's models and voices, fetched once per page load.
let catalogPromise = null;
export function catalog() {
  if (!catalogPromise) catalogPromise = api("GET", "/api/catalog").catch((e) => {
    catalogPromise = null;
    throw e;
  });
  return catalogPromise;
}

const providerNames = { openai: "OpenAI-compatible", gemini: "Gemini-compatible" };

// providerOf follows the server's patterns (agentline.ProviderForModel).
function providerOf(model) {
  const m = String(model || "").toLowerCase().trim();
  if (/^gpt-realtime/.test(m) || /^gpt-4o.*-realtime/.test(m)) return "openai";
  if (/^gemini-.*(live|native-audio)/.test(m)) return "gemini";
  return "";
}

// languages offered by the picker: BCP 47 tags both providers speak.
const languages = [
  ["en", "English"], ["en-US", "English (US)"], ["en-GB", "English (UK)"], ["en-AU", "English (Australia)"], ["en-IN", "English (India)"],
  ["de-DE", "German"], ["fr-FR", "French (France)"], ["fr-CA", "French (Canada)"], ["es-ES", "Spanish (Spain)"],
  ["es-US", "Spanish (US)"], ["it-IT", "Italian"], ["pt-BR", "Portuguese (Brazil)"], ["pt-PT", "Portuguese (Portugal)"],
  ["nl-NL", "Dutch"], ["sv-SE", "Swedish"], ["da-DK", "Danish"], ["nb-NO", "Norwegian"], ["fi-FI", "Finnish"],
  ["pl-PL", "Polish"], ["tr-TR", "Turkish"], ["ru-RU", "Russian"], ["uk-UA", "Ukrainian"], ["ar-XA", "Arabic"],
  ["hi-IN", "Hindi"], ["ja-JP", "Japanese"], ["ko-KR", "Korean"], ["zh-CN", "Chinese (Mandarin)"], ["id-ID", "Indonesian"],
  ["vi-VN", "Vietnamese"], ["th-TH", "Thai"],
];

// modelOptions groups the catalog's models by provider; a model the
// catalog does not list (but the API accepted) stays choosable.
function modelSelect(cat, value) {
  const sel = input({ name: "model", label: "Model", type: "select", options: [] });
  const el = sel.querySelector("select");
  const models = cat.models.map((m) => m.name);
  if (value && !models.includes(value)) el.append(h("option", { value }, value + " (not in the list)"));
  for (const p of ["openai", "gemini"]) {
    el.append(h("optgroup", { label: providerNames[p] }, cat.models.filter((m) => m.provider === p).map((m) => h("option", { value: m.name }, m.name))));
  }
  el.value = value || cat.default_model;
  return sel;
}

// voicePicker lists the voices of the model's provider; each says what it
// becomes where the OpenAI realtime API speaks (phone calls).
function voicePicker(cat, model, value) {
  const field = input({ name: "voice", label: "Voice", type: "select", options: [] });
  const el = field.querySelector("select");
  const mapping = h("p", { class: "hint", id: "voice-mapping" });
  el.setAttribute("aria-describedby", el.getAttribute("aria-describedby") + " voice-mapping");
  const table = h("div", { class: "voice-map" });
  const fill = (model, keep) => {
    const p = providerOf(model) || "openai";
    const voices = cat.voices.filter((v) => v.provider === p);
    const names = voices.map((v) => v.name);
    el.replaceChildren(...voices.map((v) => h("option", { value: v.name }, v.name === v.realtime_voice ? v.name : `${v.name} (phone: ${v.realtime_voice})`)));
    if (keep && !names.includes(keep)) el.prepend(h("option", { value: keep }, keep + " (not in the list)"));
    el.value = keep || cat.default_voices[p];
    table.replaceChildren(h("details", {}, h("summary", {}, `Voice mapping of ${providerNames[p]} voices`),
      h("table", { class: "compact" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Voice"), h("th", { scope: "col" }, "On phone calls"))),
        h("tbody", {}, voices.map((v) => h("tr", {}, h("td", {}, v.name), h("td", {}, v.realtime_voice)))))));
    describe();
  };
  const describe = () => {
    const v = cat.voices.find((x) => x.name === el.value);
    mapping.textContent = v ? (v.realtime_voice === v.name ? `Phone calls speak as ${v.name} too.` : `Phone calls speak as ${v.realtime_voice}, the nearest OpenAI realtime voice.`)
      : "A voice the list does not know: phone calls use marin.";
  };
  el.addEventListener("change", describe);
  fill(model, value);
  field.insertBefore(mapping, field.querySelector(".field-error"));
  field.append(table);
  return { el: field, forModel: (m) => fill(m, "") };
}

function languageSelect(value) {
  const opts = languages.slice();
  if (value && !opts.some(([v]) => v === value)) opts.unshift([value, value]);
  return input({ name: "language", label: "Language", type: "select", options: opts, value: value || "en-US",
    hint: "The language the agent speaks and expects." });
}

// analysisBuilder edits analysis.data_schema: the data to extract.
function analysisBuilder(a) {
  return rowsBuilder({
    legend: "Data to extract", field: "analysis.data_schema", noun: "field", max: 50,
    hint: "After each conversation the model fills these in; they appear on the conversation's page and in the conversation.analyzed webhook.",
    columns: schemaColumns(false), value: a.analysis.data_schema,
    toJSON: (rows) => schemaFromRows(rows, null), fromJSON: rowsFromSchema, blank: blankProperty,
  });
}

// agentSettings is the agent's settings tab.
export async function agentSettings(ctx, a) {
  const cat = await catalog();
  const saved = h("p", { role: "status", class: "muted" });
  const del = h("button", { type: "button", class: "danger" }, "Delete agent");
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete ${a.name}? Its tools, documents and channels' links go with it.`, "Delete agent"))) return;
    try {
      await api("DELETE", `/api/agents/${a.id}`);
      location.hash = "#/agents";
    } catch (e) {
      saved.textContent = e.message;
    }
  });
  const model = modelSelect(cat, a.model);
  const voice = voicePicker(cat, a.model, a.voice);
  const provider = h("p", { class: "hint", id: "model-provider" });
  const showProvider = (m) => (provider.textContent = `Runs on the ${providerNames[providerOf(m)] || "?"} provider.`);
  showProvider(a.model);
  model.insertBefore(provider, model.querySelector(".field-error"));
  let current = a.model;
  model.querySelector("select").addEventListener("change", (ev) => {
    // Another provider's model takes that provider's voices.
    if (providerOf(ev.target.value) !== providerOf(current)) voice.forModel(ev.target.value);
    current = ev.target.value;
    showProvider(current);
  });
  const data = analysisBuilder(a);
  const f = form([
    { name: "name", label: "Name", value: a.name, required: true },
    { name: "instructions", label: "Instructions", type: "textarea", rows: 8, value: a.instructions, hint: "The system prompt." },
    { name: "greeting", label: "Greeting", value: a.greeting, hint: "Optional first words of the agent." },
    h("div", { class: "cols2" }, model, languageSelect(a.language)),
    voice.el,
    { name: "transfer_number", label: "Transfer number", type: "tel", value: a.transfer_number, hint: "E.164 (+14155550123); empty for no call transfers." },
    h("h2", { class: "section" }, "Recording"),
    { name: "record_calls", label: "Record phone calls", type: "checkbox", value: a.record_calls,
      hint: "Both sides, as a stereo WAV kept for the project's retention time. Callers may have to be told they are recorded: say so in the greeting where the law asks for it." },
    h("h2", { class: "section" }, "Analysis after each conversation"),
    { name: "analysis.summary", label: "Write a summary", type: "checkbox", value: a.analysis.summary },
    { name: "analysis.success_criteria", label: "Success criteria", type: "textarea", rows: 3, value: a.analysis.success_criteria,
      hint: "In plain words, when did the conversation succeed? Empty: no success evaluation." },
    data.el,
  ], "Save", async (v) => {
    v.analysis.data_schema = data.read();
    // Only what changed: a new model without a new voice then gets its
    // provider's default voice from the API.
    const changed = Object.fromEntries(Object.entries(v).filter(([k, x]) => JSON.stringify(x) !== JSON.stringify(a[k])));
    const updated = await api("PATCH", `/api/agents/${a.id}`, changed);
    Object.assign(a, updated);
    saved.textContent = `Saved at ${when(updated.updated_at)}.`;
  }, { extra: saved, label: "Agent settings", need: "create" });
  return h("div", {}, h("div", { class: "card" }, f), can("delete") ? h("div", { class: "card" }, h("h2", {}, "Danger zone"), del) : null);
}

// ---- tools --------------------------------------------------------------

// toolForm creates a tool (t null) or edits t.
function toolForm(a, t, done) {
  const params = rowsBuilder({
    legend: "Parameters", field: "parameters", noun: "parameter", max: 50,
    hint: "What the model sends the tool, as a JSON Schema object.",
    columns: schemaColumns(true), value: t ? t.parameters : { type: "object", properties: {} },
    toJSON: (rows) => schemaFromRows(rows, { type: "object", properties: {} }), fromJSON: rowsFromSchema, blank: blankProperty,
  });
  const label = t ? `Save ${t.name}` : "Add tool";
  const cancel = t ? h("button", { type: "button", onclick: () => done(null) }, "Cancel") : null;
  return form([
    { name: "name", label: "Name", placeholder: "lookup_order", required: true, value: t ? t.name : "" },
    { name: "description", label: "Description", hint: "Tells the model when to call it.", value: t ? t.description : "" },
    { name: "url", label: "URL", type: "url", placeholder: "https://example.com/hooks/order", required: true, value: t ? t.url : "" },
    { name: "method", label: "Method", type: "select", options: [["POST", "POST"], ["GET", "GET"]], value: t ? t.method : "POST" },
    params.el,
  ], label, async (v) => {
    v.parameters = params.read() || { type: "object", properties: {} };
    const saved = t ? await api("PATCH", `/api/tools/${t.id}`, v) : await api("POST", `/api/agents/${a.id}/tools`, v);
    done(saved);
  }, { label: t ? "Edit tool" : "Add tool", extra: cancel });
}

function toolRow(a, t, box) {
  const edit = h("button", { type: "button" }, "Edit");
  const del = h("button", { type: "button", class: "danger" }, "Delete");
  edit.setAttribute("aria-label", `Edit ${t.name}`);
  del.setAttribute("aria-label", `Delete ${t.name}`);
  edit.addEventListener("click", () => {
    const card = h("div", { class: "card", id: "tool-editor" }, h("h2", {}, "Edit " + t.name));
    card.append(toolForm(a, t, (saved) => {
      card.remove();
      if (saved) hooks.render();
      else edit.focus();
    }));
    box.querySelector("#tool-editor")?.remove();
    box.prepend(card);
    card.querySelector("input").focus();
  });
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete the tool ${t.name}?`, "Delete tool"))) return;
    try {
      await api("DELETE", `/api/tools/${t.id}`);
      hooks.render();
    } catch (e) {
      box.prepend(notice(e.message, "error"));
    }
  });
  const props = Object.keys((t.parameters && t.parameters.properties) || {});
  return h("tr", {}, h("td", {}, h("b", {}, t.name), h("br", {}), h("span", { class: "muted" }, t.description)),
    h("td", {}, t.method), h("td", { class: "wrap" }, t.url), h("td", {}, props.join(", ") || "none"),
    h("td", { class: "actions" }, can("create") ? edit : null, can("delete") ? del : null));
}

// agentTools is the agent's tools tab: its webhook tools, each editable.
export async function agentTools(ctx, a) {
  const tools = await api("GET", `/api/agents/${a.id}/tools`);
  const editors = h("div", {});
  const rows = tools.map((t) => toolRow(a, t, editors));
  const table = rows.length ? h("div", { class: "table" }, h("table", {},
    h("thead", {}, h("tr", {}, ["Tool", "Method", "URL", "Parameters"].map((x) => h("th", { scope: "col" }, x)),
      h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Actions")))), h("tbody", {}, rows)))
    : h("p", { class: "muted" }, "No tools yet.");
  return h("div", {},
    h("p", { class: "muted" }, "The model calls these HTTP endpoints with the arguments it chose; the answer goes back to it."),
    table, editors,
    can("create") ? h("div", { class: "card" }, h("h2", {}, "New webhook tool"), toolForm(a, null, () => hooks.render())) : null);
}

// ---- form channel fields ------------------------------------------------

const fieldTypes = [["text", "Text"], ["email", "Email"], ["tel", "Phone"], ["textarea", "Long text"], ["select", "Choice"], ["checkbox", "Checkbox"]];

// formFieldsBuilder edits settings.form.fields.
export function formFieldsBuilder(fields) {
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
    toJSON: (rows) => rows.map((r) => {
      const out = { name: r.name.trim() || slug(r.label), label: r.label.trim(), type: r.type, required: !!r.required };
      if (r.type === "select") out.options = splitOptions(r.options);
      return out;
    }),
    fromJSON: (list) => {
      if (!Array.isArray(list) || list.some((f) => !f || typeof f !== "object" || (f.options || []).some((o) => String(o).includes(",")))) return null;
      return list.map((f) => ({ name: f.name || "", label: f.label || "", type: f.type || "text", required: !!f.required, options: (f.options || []).join(", ") }));
    },
    blank: () => ({ name: "", label: "", type: "text", required: false, options: "" }),
  });
}

// slug turns a label into a field name when none is given.
function slug(label) {
  const s = String(label || "").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 50);
  return /^[a-z]/.test(s) ? s : s ? "f_" + s.slice(0, 48) : "";
}
