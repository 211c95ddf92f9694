// Shared parts of the console: the DOM builder, the API client, forms,
// dialogs and formatting. The page modules (app.js, editors.js,
// conversations.js) import them; app.js sets hooks.signedOut and
// hooks.render, which the API client and the editors call back.

export const hooks = { signedOut: () => {}, signedIn: () => {}, opened: () => {}, render: () => {} };

export const TOKEN = "agentline.token";
export const PROJECT = "agentline.project";

export const state = { token: sessionStorage.getItem(TOKEN), me: null, projects: [], project: null };

// ---- DOM building -------------------------------------------------------

// h builds an element: attributes (on* are listeners, booleans set
// properties) and children (strings become text, null and false are
// skipped, arrays are flattened).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  el.append(...flat(children));
  return el;
}

// s builds an SVG element the same way.
export function s(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  setAttrs(el, attrs);
  el.append(...flat(children));
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
}

export function flat(children) {
  const out = [];
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    out.push(c instanceof Node ? c : String(c));
  }
  return out;
}

// ---- the API ------------------------------------------------------------

export class APIError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `The server answered ${status}.`);
    this.status = status;
    this.code = e.code || "";
    this.field = e.field || "";
    // fields gives several fields their own problem (a form submission).
    this.fields = e.fields || null;
  }
}

// api calls the management API with the session token; it returns the
// decoded JSON (null for 204) or throws an APIError. A 401 signs out.
export async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (state.token) opts.headers.Authorization = "Bearer " + state.token;
  if (body instanceof FormData) opts.body = body;
  else if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch {
    throw new APIError(0, { error: { message: "The server cannot be reached. Check your connection and try again." } });
  }
  if (res.status === 204) return null;
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    if (res.status === 401 && state.token && path !== "/api/auth/login") {
      hooks.signedOut("Your sign-in has ended. Please sign in again.");
    }
    throw new APIError(res.status, data);
  }
  return data;
}

// fetchBlob fetches, with the session's token, what a link or an <audio
// src> could not (they send no token): a CSV export, a call's recording.
export async function fetchBlob(path) {
  const res = await fetch(path, { headers: { Authorization: "Bearer " + state.token } });
  if (!res.ok) throw new APIError(res.status, await res.json().catch(() => null));
  return res.blob();
}

// download fetches a file with the session's token and saves it as name.
export async function download(path, name) {
  const url = URL.createObjectURL(await fetchBlob(path));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
  const str = q.toString();
  return str ? "?" + str : "";
}

// ---- forms --------------------------------------------------------------

let fieldSeq = 0;

// input builds one labelled field. spec: {name, label, type, value,
// options: [[value, label]], hint, required, placeholder}. Names may be
// dotted (settings.color): values() nests them, and an API error naming
// that field is shown under it.
export function input(spec) {
  const id = "f" + ++fieldSeq;
  const type = spec.type || "text";
  let el;
  if (type === "textarea" || type === "lines") {
    el = h("textarea", { id, name: spec.name, rows: spec.rows || 4, placeholder: spec.placeholder, required: spec.required });
    el.value = type === "lines" ? (spec.value || []).join("\n") : spec.value ?? "";
  } else if (type === "select") {
    el = h("select", { id, name: spec.name, required: spec.required },
      spec.options.map(([v, l]) => h("option", { value: v }, l)));
    el.value = spec.value ?? (spec.options[0] ? spec.options[0][0] : "");
  } else if (type === "checkbox") {
    el = h("input", { id, name: spec.name, type: "checkbox" });
    el.checked = !!spec.value;
  } else {
    el = h("input", { id, name: spec.name, type, placeholder: spec.placeholder, required: spec.required,
      autocomplete: spec.autocomplete, min: spec.min, list: spec.list, inputmode: spec.inputmode });
    el.value = spec.value ?? "";
  }
  el.dataset.kind = type;
  const err = h("p", { class: "field-error", id: id + "-err", "data-error-for": spec.name });
  el.setAttribute("aria-describedby", id + "-err" + (spec.hint ? " " + id + "-hint" : ""));
  const hint = spec.hint ? h("p", { class: "hint", id: id + "-hint" }, spec.hint) : null;
  if (type === "checkbox") return h("div", { class: "field" }, h("label", { class: "check", for: id }, el, spec.label), hint, err);
  return h("div", { class: "field" }, h("label", { for: id }, spec.label), el, hint, err);
}

// values reads a form's named fields into an object, nesting dotted names.
export function values(form) {
  const out = {};
  for (const el of form.querySelectorAll("[name]")) {
    let v;
    switch (el.dataset.kind) {
      case "checkbox": v = el.checked; break;
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

// can tells whether the signed-in user's role in the current project
// allows what: "create" (creating, changing, testing: editors and owners)
// or "delete" (deleting, revoking, ending calls: owners). The console shows
// only the controls a role can use; the API decides anyway.
export function can(what) {
  const role = state.project && state.project.role;
  return what === "delete" ? role === "owner" : role === "owner" || role === "editor";
}

// readOnly shows a form to a role that may not change it: its controls
// disabled, its buttons hidden, and a line saying who may.
export function readOnly(f) {
  for (const el of f.querySelectorAll("input, select, textarea")) el.disabled = true;
  for (const b of f.querySelectorAll("button")) b.hidden = true;
  f.prepend(h("p", { class: "muted" }, "You are a viewer here: you can read this; editors and owners change it."));
  return f;
}

// form builds a form of fields whose submit runs onSubmit(values). An API
// error goes under the field it names, or above the buttons. opts.need
// ("create") makes it read-only for a role without it.
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

function clearErrors(f) {
  for (const e of f.querySelectorAll(".field-error, .form-error")) e.textContent = "";
  for (const e of f.querySelectorAll("[aria-invalid]")) e.removeAttribute("aria-invalid");
}

// showError puts an error's message next to its field, or each message of
// error.fields next to its own field, focusing the first; what has no field
// in the form goes to the form's foot.
function showError(f, err) {
  if (!(err instanceof APIError) && !(err instanceof FieldError)) console.error(err);
  const msg = err.message || String(err);
  const problems = err.fields ? Object.entries(err.fields) : [[err.field || "", msg]];
  const rest = [];
  let first = null;
  for (const [name, text] of problems) {
    const el = markField(f, name, text);
    if (!el) rest.push(err.fields ? `${name}: ${text}` : text);
    // The first in the page's order, whatever order the messages came in.
    if (el && (!first || first.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING)) first = el;
  }
  if (first) first.focus();
  f.querySelector(".form-error").textContent = rest.join("; ");
}

// markField shows text under the field an API name points at and returns
// its control, or null. The name matches exactly (without list indexes:
// allowed_origins[2] is the allowed_origins field), or a field whose name
// ends in it, or a field it lies inside (settings.form.fields[1].name is
// the settings.form.fields field).
function markField(f, name, text) {
  const field = name.replace(/\[\d+\]/g, "");
  if (!field) return null;
  const slots = [...f.querySelectorAll("[data-error-for]")];
  const slot = slots.find((s) => s.dataset.errorFor === field) ||
    slots.find((s) => s.dataset.errorFor.endsWith("." + field) || field.endsWith("." + s.dataset.errorFor)) ||
    slots.find((s) => field.startsWith(s.dataset.errorFor + "."));
  if (!slot) return null;
  slot.textContent = text;
  // A builder's controls have no name: its first control takes the focus.
  const el = f.querySelector(`[name="${CSS.escape(slot.dataset.errorFor)}"]`) ||
    slot.closest(".builder")?.querySelector(".builder-json:not([hidden]) textarea, .builder-rows:not([hidden]) input, .builder-rows:not([hidden]) select");
  if (el) el.setAttribute("aria-invalid", "true");
  return el;
}

// FieldError is a check made in the browser before the API is asked.
export class FieldError extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

// confirmAction asks before a destructive action, in a modal dialog (Esc
// and Cancel say no); it resolves to true for yes.
export function confirmAction(question, yes) {
  return new Promise((resolve) => {
    const cancel = h("button", { type: "button" }, "Cancel");
    const ok = h("button", { type: "button", class: "danger primary" }, yes);
    const d = h("dialog", { "aria-label": question }, h("p", {}, question), h("div", { class: "row" }, cancel, ok));
    cancel.addEventListener("click", () => d.close("no"));
    ok.addEventListener("click", () => d.close("yes"));
    d.addEventListener("close", () => {
      d.remove();
      resolve(d.returnValue === "yes");
    });
    document.body.append(d);
    d.showModal();
    cancel.focus();
  });
}

// copyButton copies text to the clipboard; where the browser refuses, it
// selects the text so the keyboard can copy it.
export function copyButton(text, target, label = "Copy") {
  const b = h("button", { type: "button" }, label);
  b.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text());
      b.textContent = "Copied";
    } catch {
      if (target) getSelection().selectAllChildren(target);
      b.textContent = "Selected: press Ctrl+C";
    }
    setTimeout(() => (b.textContent = label), 2500);
  });
  return b;
}

// ---- secrets shown once ---------------------------------------------------

// A secret is whole on screen only when it is made (a webhook's signing
// secret, a channel's key, an invitation or reset link): agentline keeps
// just its hash. So it stays, through every redraw of its page and visits
// to others, until the user dismisses it; signing out or
// closing the tab forgets it too. slot names whose it is ("key:3").
const kept = new Map();

// keep holds value (the secret, or a node that shows it) under slot.
export function keep(slot, value) {
  kept.set(slot, value);
}

// shown is what slot holds, or undefined.
export function shown(slot) {
  return kept.get(slot);
}

// forget drops slot's secret; without a slot, every one (signing out).
export function forget(slot) {
  if (slot === undefined) kept.clear();
  else kept.delete(slot);
}

// dismissButton forgets slot's secret and draws the page without it.
export function dismissButton(slot) {
  return h("button", { type: "button", onclick: () => { forget(slot); hooks.render(); } }, "Dismiss");
}

// shownBox is the node slot holds, with its Dismiss button, or null.
export function shownBox(slot, id = "link-shown") {
  const node = kept.get(slot);
  if (!node) return null;
  return h("div", { id, class: "notice", role: "status" }, node, h("p", {}, dismissButton(slot)));
}

// alertError shows an error of an action at the top of the page.
export function alertError(e) {
  document.getElementById("main").prepend(notice(e.message, "error"));
}

export function notice(text, kind) {
  return h("p", { class: "notice" + (kind ? " " + kind : ""), role: kind === "error" ? "alert" : "status" }, text);
}

// ---- formatting ---------------------------------------------------------

export function when(t) {
  return t ? new Date(t).toISOString().slice(0, 16).replace("T", " ") + " UTC" : "";
}

export function table(headers, rows, empty) {
  if (!rows.length) return h("p", { class: "muted" }, empty);
  return h("div", { class: "table" }, h("table", {},
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x || h("span", { class: "sr-only" }, "Actions"))))),
    h("tbody", {}, rows)));
}

// transcript renders transcript lines, tool calls and errors in order.
export function transcript(items) {
  if (!items.length) return h("p", { class: "muted" }, "Nothing was said.");
  return h("ol", { class: "transcript" }, items.map((e) => {
    if (e.kind === "tool") {
      return h("li", { class: "tool" }, h("span", { class: "who" }, "Tool " + (e.name || "")),
        e.arguments !== undefined ? "arguments " + json(e.arguments) : "", e.output !== undefined ? " → " + json(e.output) : "",
        e.is_error ? " (error)" : "");
    }
    if (e.kind === "error") return h("li", { class: "error" }, h("span", { class: "who" }, "Error"), e.text);
    if (e.kind === "dtmf") return h("li", {}, h("span", { class: "who" }, "Keypad"), e.text);
    return h("li", { class: e.role }, h("span", { class: "who" }, label(e.role) + ":"), e.text);
  }));
}

// answerList shows a lead's answers by its form's labels, in the form's
// order (fields: the channel's settings.form.fields, when known); answers
// to fields the form no longer has follow under their names. Checkboxes
// read yes or no, as in the CSV.
export function answerList(fields, answers) {
  const a = answers || {};
  const rows = (fields || []).filter((f) => f.name in a).map((f) => [f.label || f.name, a[f.name]]);
  const known = new Set((fields || []).map((f) => f.name));
  for (const k of Object.keys(a).sort()) if (!known.has(k)) rows.push([k, a[k]]);
  return h("dl", { class: "answers" }, rows.map(([k, x]) => [h("dt", {}, k), h("dd", {}, typeof x === "boolean" ? (x ? "yes" : "no") : json(x))]));
}

// formFields are a channel's form fields, or none for a widget channel.
export function formFields(channel) {
  return (channel && channel.settings && channel.settings.form && channel.settings.form.fields) || [];
}

export function label(role) {
  return { user: "Visitor", assistant: "Agent", caller: "Caller", agent: "Agent" }[role] || role || "?";
}

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function json(v) {
  return typeof v === "string" ? v : JSON.stringify(v);
}

// ---- filtered lists ------------------------------------------------------

// agentOptions are a select's options of agents, after a first "none"
// option when it is named.
export function agentOptions(agents, none) {
  return (none ? [["", none]] : []).concat(agents.map((a) => [String(a.id), a.name]));
}

export async function filterSelects() {
  const pid = state.project.id;
  const [channels, agents] = await Promise.all([api("GET", `/api/projects/${pid}/channels`), api("GET", `/api/projects/${pid}/agents`)]);
  return {
    channels, agents,
    channel: { name: "channel_id", label: "Channel", type: "select", options: [["", "All channels"]].concat(channels.map((c) => [String(c.id), c.name || `Channel ${c.id}`])) },
    agent: { name: "agent_id", label: "Agent", type: "select", options: agentOptions(agents, "All agents") },
  };
}

// filtered shows a filter form and a result list under it; run(values)
// returns the list's nodes.
export function filtered(fields, run) {
  const out = h("div", { "aria-live": "polite" });
  const f = form(fields, "Apply filters", async (v) => out.replaceChildren(...flat([await run(v)])), { label: "Filters" });
  f.classList.add("card", "filters");
  // The first results come without a click (requestSubmit needs the form
  // in the document, which it is not yet).
  f.dispatchEvent(new Event("submit", { cancelable: true }));
  return [f, out];
}
