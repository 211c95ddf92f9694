// @ts-check
// Rendering helpers: the DOM builder and the small pieces every page uses
// (notices, tables, dialogs, copy buttons, transcripts, formatting). API
// data only ever reaches the page as text: h() builds the DOM, and no
// string is ever parsed as HTML.

/** @typedef {Node | string | number | boolean | null | undefined | Child[]} Child */
/**
 * @typedef {Record<string, string | number | boolean | null | undefined | ((ev: never) => unknown)>} Attrs
 * Attributes; on* are listeners (each takes its own event's type), true
 * sets an empty attribute, null, undefined and false none.
 */

/**
 * h builds an element: attributes (on* are listeners, booleans set
 * properties) and children (strings become text, null and false are
 * skipped, arrays are flattened).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Attrs | null} attrs @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  el.append(...flat(children));
  return el;
}

/**
 * s builds an SVG element the same way.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag @param {Attrs | null} attrs @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  setAttrs(el, attrs);
  el.append(...flat(children));
  return el;
}

/** @param {Element} el @param {Attrs | null} attrs */
function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
}

/** flat is children as append() takes them: nested arrays flattened, null, undefined and false dropped. @param {Child[]} children */
export function flat(children) {
  /** @type {(Node | string)[]} */
  const out = [];
  const walk = (/** @type {Child[]} */ list) => {
    for (const c of list) {
      if (Array.isArray(c)) walk(c);
      else if (c !== null && c !== undefined && c !== false) out.push(c instanceof Node ? c : String(c));
    }
  };
  walk(children);
  return out;
}

/** main is the page's main element. */
export function main() {
  return /** @type {HTMLElement} */ (document.getElementById("main"));
}

/** notice is a line of news, an error (role alert) or not. @param {string} text @param {string} [kind] */
export function notice(text, kind) {
  return h("p", { class: "notice" + (kind ? " " + kind : ""), role: kind === "error" ? "alert" : "status" }, text);
}

/** alertError shows an error of an action at the top of the page. @param {unknown} e */
export function alertError(e) {
  main().prepend(notice(e instanceof Error ? e.message : String(e), "error"));
}

/** errorText is what an error says. @param {unknown} e */
export function errorText(e) {
  return e instanceof Error ? e.message : String(e);
}

/**
 * confirmAction asks before a destructive action, in a modal dialog (Esc
 * and Cancel say no); it resolves to true for yes.
 * @param {string} question @param {string} yes @returns {Promise<boolean>}
 */
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

/**
 * copyButton copies text to the clipboard; where the browser refuses, it
 * selects the text so the keyboard can copy it.
 * @param {() => string} text @param {Node | null} target @param {string} [label]
 */
export function copyButton(text, target, label = "Copy") {
  const b = h("button", { type: "button" }, label);
  b.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text());
      b.textContent = "Copied";
    } catch {
      if (target) getSelection()?.selectAllChildren(target);
      b.textContent = "Selected: press Ctrl+C";
    }
    setTimeout(() => (b.textContent = label), 2500);
  });
  return b;
}

// ---- formatting ---------------------------------------------------------

/** when shows a time as YYYY-MM-DD hh:mm UTC, or "" for none. @param {string | null | undefined} t */
export function when(t) {
  return t ? new Date(t).toISOString().slice(0, 16).replace("T", " ") + " UTC" : "";
}

/** @param {number} n @param {string} word */
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** json shows a value: a string as it is, anything else as JSON. @param {unknown} v */
export function json(v) {
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** label names who spoke. @param {string | undefined} role */
export function label(role) {
  return /** @type {Record<string, string>} */ ({ user: "Visitor", assistant: "Agent", caller: "Caller", agent: "Agent" })[role || ""] || role || "?";
}

/** table is a table of rows under headers ("" is an actions column), or empty's line. @param {string[]} headers @param {Node[]} rows @param {string} empty */
export function table(headers, rows, empty) {
  if (!rows.length) return h("p", { class: "muted" }, empty);
  return h("div", { class: "table" }, h("table", {},
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col" }, x || h("span", { class: "sr-only" }, "Actions"))))),
    h("tbody", {}, rows)));
}

/**
 * @typedef {object} TranscriptItem A line, tool call, keypad digit or error.
 * @property {string} kind "line", "tool", "dtmf" or "error"
 * @property {string} [role]
 * @property {string} [text]
 * @property {string} [name]
 * @property {unknown} [arguments]
 * @property {unknown} [output]
 * @property {boolean} [is_error]
 */

/** transcript renders transcript lines, tool calls and errors in order. @param {TranscriptItem[]} items */
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
