// @ts-check
// The agent's Settings tab: name, instructions and greeting; model, voice
// and language pickers fed by the server's catalog; the transfer number;
// recording; the analysis after each conversation, with a builder of the
// data to extract.

import { deleteAgent, getCatalog, updateAgent } from "../api.js";
import { blankProperty, rowsBuilder, rowsFromSchema, schemaColumns, schemaFromRows } from "../builder.js";
import { h, confirmAction, when, errorText } from "../dom.js";
import { form, input } from "../forms.js";
import { can } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {Agent, Catalog, Provider} from "../types.js" */

/** @type {Record<string, string>} */
const providerNames = { openai: "OpenAI-compatible", gemini: "Gemini-compatible" };

/** providerOf follows the server's patterns (agentline.ProviderForModel). @param {string} model @returns {Provider | ""} */
function providerOf(model) {
  const m = String(model || "").toLowerCase().trim();
  if (/^gpt-realtime/.test(m) || /^gpt-4o.*-realtime/.test(m)) return "openai";
  if (/^gemini-.*(live|native-audio)/.test(m)) return "gemini";
  return "";
}

/** @type {[string, string][]} languages offered by the picker: BCP 47 tags both providers speak */
const languages = [
  ["en", "English"], ["en-US", "English (US)"], ["en-GB", "English (UK)"], ["en-AU", "English (Australia)"], ["en-IN", "English (India)"],
  ["de-DE", "German"], ["fr-FR", "French (France)"], ["fr-CA", "French (Canada)"], ["es-ES", "Spanish (Spain)"],
  ["es-US", "Spanish (US)"], ["it-IT", "Italian"], ["pt-BR", "Portuguese (Brazil)"], ["pt-PT", "Portuguese (Portugal)"],
  ["nl-NL", "Dutch"], ["sv-SE", "Swedish"], ["da-DK", "Danish"], ["nb-NO", "Norwegian"], ["fi-FI", "Finnish"],
  ["pl-PL", "Polish"], ["tr-TR", "Turkish"], ["ru-RU", "Russian"], ["uk-UA", "Ukrainian"], ["ar-XA", "Arabic"],
  ["hi-IN", "Hindi"], ["ja-JP", "Japanese"], ["ko-KR", "Korean"], ["zh-CN", "Chinese (Mandarin)"], ["id-ID", "Indonesian"],
  ["vi-VN", "Vietnamese"], ["th-TH", "Thai"],
];

/** @param {HTMLElement} field */
const selectOf = (field) => /** @type {HTMLSelectElement} */ (field.querySelector("select"));

/**
 * modelSelect groups the catalog's models by provider; a model the
 * catalog does not list (but the API accepted) stays choosable.
 * @param {Catalog} cat @param {string} value
 */
function modelSelect(cat, value) {
  const field = input({ name: "model", label: "Model", type: "select", options: [] });
  const el = selectOf(field);
  const models = cat.models.map((m) => m.name);
  if (value && !models.includes(value)) el.append(h("option", { value }, value + " (not in the list)"));
  for (const p of ["openai", "gemini"]) {
    el.append(h("optgroup", { label: providerNames[p] }, cat.models.filter((m) => m.provider === p).map((m) => h("option", { value: m.name }, m.name))));
  }
  el.value = value || cat.default_model;
  return field;
}

/**
 * voicePicker lists the voices of the model's provider; each says what it
 * becomes on phone calls: itself for a Gemini-compatible model (its Live
 * API speaks on calls too), else the OpenAI realtime voice it maps to.
 * @param {Catalog} cat @param {string} model @param {string} value
 */
function voicePicker(cat, model, value) {
  const field = input({ name: "voice", label: "Voice", type: "select", options: [] });
  const el = selectOf(field);
  const mapping = h("p", { class: "hint", id: "voice-mapping" });
  el.setAttribute("aria-describedby", el.getAttribute("aria-describedby") + " voice-mapping");
  const table = h("div", { class: "voice-map" });
  /** @type {Provider} */
  let provider = "openai";
  const onPhone = (/** @type {{name: string, realtime_voice: string}} */ v) => provider === "gemini" ? v.name : v.realtime_voice;
  const describe = () => {
    const v = cat.voices.find((x) => x.name === el.value);
    mapping.textContent = v ? (onPhone(v) === v.name ? `Phone calls speak as ${v.name} too.` : `Phone calls speak as ${v.realtime_voice}, the nearest OpenAI realtime voice.`)
      : `A voice the list does not know: phone calls use ${cat.default_voices[provider]}.`;
  };
  const fill = (/** @type {string} */ model, /** @type {string} */ keep) => {
    const p = providerOf(model) || "openai";
    provider = p;
    const voices = cat.voices.filter((v) => v.provider === p);
    const names = voices.map((v) => v.name);
    el.replaceChildren(...voices.map((v) => h("option", { value: v.name }, v.name === onPhone(v) ? v.name : `${v.name} (phone: ${onPhone(v)})`)));
    if (keep && !names.includes(keep)) el.prepend(h("option", { value: keep }, keep + " (not in the list)"));
    el.value = keep || cat.default_voices[p];
    table.replaceChildren(h("details", {}, h("summary", {}, `Voice mapping of ${providerNames[p]} voices`),
      h("table", { class: "compact" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Voice"), h("th", { scope: "col" }, "On phone calls"))),
        h("tbody", {}, voices.map((v) => h("tr", {}, h("td", {}, v.name), h("td", {}, onPhone(v))))))));
    describe();
  };
  el.addEventListener("change", describe);
  fill(model, value);
  field.insertBefore(mapping, field.querySelector(".field-error"));
  field.append(table);
  return { el: field, forModel: (/** @type {string} */ m) => fill(m, "") };
}

/** @param {string} value */
function languageSelect(value) {
  const opts = languages.slice();
  if (value && !opts.some(([v]) => v === value)) opts.unshift([value, value]);
  return input({ name: "language", label: "Language", type: "select", options: opts, value: value || "en-US",
    hint: "The language the agent speaks and expects." });
}

/** analysisBuilder edits analysis.data_schema: the data to extract. @param {Agent} a */
function analysisBuilder(a) {
  return rowsBuilder({
    legend: "Data to extract", field: "analysis.data_schema", noun: "field", max: 50,
    hint: "After each conversation the model fills these in; they appear on the conversation's page and in the conversation.analyzed webhook.",
    columns: schemaColumns(false), value: a.analysis.data_schema,
    toJSON: (rows) => schemaFromRows(rows, null), fromJSON: rowsFromSchema, blank: blankProperty,
  });
}

/** deleteButton deletes the agent, after asking. @param {Agent} a @param {HTMLElement} status */
function deleteButton(a, status) {
  const del = h("button", { type: "button", class: "danger" }, "Delete agent");
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete ${a.name}? Its tools, documents and channels' links go with it.`, "Delete agent"))) return;
    try {
      await deleteAgent(a.id);
      location.hash = "#/agents";
    } catch (e) {
      status.textContent = errorText(e);
    }
  });
  return del;
}

/** agentSettings is the agent's settings tab. @param {PageContext} ctx @param {Agent} a */
export async function agentSettings(ctx, a) {
  const cat = await getCatalog();
  const saved = h("p", { role: "status", class: "muted" });
  const model = modelSelect(cat, a.model);
  const voice = voicePicker(cat, a.model, a.voice);
  const provider = h("p", { class: "hint", id: "model-provider" });
  const showProvider = (/** @type {string} */ m) => (provider.textContent = `Runs on the ${providerNames[providerOf(m)] || "?"} provider.`);
  showProvider(a.model);
  model.insertBefore(provider, model.querySelector(".field-error"));
  let current = a.model;
  selectOf(model).addEventListener("change", (ev) => {
    const chosen = /** @type {HTMLSelectElement} */ (ev.target).value;
    // Another provider's model takes that provider's voices.
    if (providerOf(chosen) !== providerOf(current)) voice.forModel(chosen);
    current = chosen;
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
    { name: "review_before_publish", label: "Review before publishing", type: "checkbox", value: a.review_before_publish,
      hint: "Saves become drafts the Test tab can try; publish one on the Versions tab. Off: every save publishes." },
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
    const was = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (a));
    const changed = Object.fromEntries(Object.entries(v).filter(([k, x]) => JSON.stringify(x) !== JSON.stringify(was[k])));
    const updated = await updateAgent(a.id, changed);
    Object.assign(a, updated);
    saved.textContent = `Saved at ${when(updated.updated_at)} as version ${updated.version}` +
      (updated.published_version === updated.version ? ", published." : `, a draft: version ${updated.published_version} stays published.`);
  }, { extra: saved, label: "Agent settings", need: "create" });
  return h("div", {}, h("div", { class: "card" }, f),
    can("delete") ? h("div", { class: "card" }, h("h2", {}, "Danger zone"), deleteButton(a, saved)) : null);
}
