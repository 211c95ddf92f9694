// @ts-check
// The agent's Test tab: a conversation with the agent by voice, or by text
// (a text session: no microphone, no audio, the agent writes), through the
// client SDK (/sdk/client.js), on a console test session: no channel and
// no key, the sign-in's token authorizes it. It is stored like a widget
// session, from origin "console".

import { listProviderAccounts, sessionToken, testSessionURL } from "../api.js";
import { h, json, notice } from "../dom.js";
import { can, features, onLeave, project } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {Agent} from "../types.js" */
/** @import {Session} from "../../../sdk/js/index.js" */

const SDK = "/sdk/client.js";

/**
 * sdk loads the client SDK the server serves, when a test starts.
 * @returns {Promise<typeof import("../../../sdk/js/index.js")>}
 */
function sdk() {
  return import(SDK);
}

/** @type {Session | null} the test running, if any */
let test = null;

/**
 * @typedef {object} Panel The Test panel's parts a session updates.
 * @property {HTMLElement} status
 * @property {HTMLOListElement} lines
 * @property {HTMLElement} err
 * @property {HTMLInputElement} msg
 * @property {(on: boolean, textOnly: boolean) => void} running shows the controls of a live test, or of none
 */

/**
 * follow shows a test session on the panel as it goes: its state, its
 * lines (each updated in place as it streams), tool calls and errors.
 * @param {Session} session @param {Panel} panel @param {boolean} textOnly
 */
function follow(session, panel, textOnly) {
  const shown = new Map();
  /** @type {Record<string, string>} */
  const labels = textOnly
    ? { connecting: "Connecting…", listening: "Live by text: type a message.", speaking: "Live by text: the agent is writing.", ended: "Ended." }
    : { connecting: "Connecting…", listening: "Live: listening.", speaking: "Live: the agent is speaking.", ended: "Ended." };
  session.on("state", (st) => {
    panel.status.textContent = labels[st] || st;
    panel.running(st !== "ended", textOnly);
    if (st === "listening" && textOnly && document.activeElement !== panel.msg) panel.msg.focus();
  });
  session.on("transcript", (t) => {
    let li = shown.get(t.id);
    if (!li) shown.set(t.id, (li = h("li", { class: t.role })));
    li.replaceChildren(h("span", { class: "who" }, t.role === "user" ? "You:" : "Agent:"), " ", t.text);
    panel.lines.append(li);
  });
  session.on("toolCall", (c) => panel.lines.append(h("li", { class: "tool" }, h("span", { class: "who" }, "Tool " + c.name),
    " arguments " + json(c.arguments) + " → " + json(c.output) + (c.isError ? " (error)" : ""))));
  session.on("error", (e) => (panel.err.textContent = e.message));
  session.on("end", () => {
    if (test === session) test = null;
    panel.running(false, false);
  });
}

/** @param {PageContext} ctx @param {Agent} a */
export async function agentTest(ctx, a) {
  if (!can("create")) {
    return h("div", { class: "card test-panel" }, h("h2", {}, "Test " + a.name),
      h("p", { class: "muted" }, "You are a viewer here: a test talks to the agent and is stored, which needs an editor or owner role."));
  }
  const { createClient } = await sdk();
  const f = features();
  // The project's own account of the agent's kind comes before the server's.
  const own = (await listProviderAccounts(project().id).catch(() => [])).find((x) => x.kind === a.provider);
  const via = own ? `the project's own account at ${own.base_url}`
    : a.provider === "gemini" ? (f.gemini_configured ? "Gemini" : "")
    : f.sandbox ? "the sandbox (a pretend provider)" : f.openai_configured ? "OpenAI" : "";
  const status = h("p", { class: "muted", role: "status", id: "test-status" }, "Not connected.");
  const lines = h("ol", { class: "transcript", id: "test-transcript", "aria-label": "Test transcript", "aria-live": "polite" });
  const err = h("p", { class: "form-error", role: "alert" });
  const voice = h("button", { type: "button", class: "primary" }, "Talk (microphone)");
  const typed = h("button", { type: "button" }, "Chat by text");
  const mute = h("button", { type: "button", "aria-pressed": "false", hidden: true }, "Mute");
  const stop = h("button", { type: "button", class: "danger", hidden: true }, "End");
  const msg = h("input", { id: "test-message", type: "text", autocomplete: "off", disabled: true });
  const send = h("form", { class: "test-send", "aria-label": "Send a message" },
    h("label", { for: "test-message" }, "Message"), h("div", { class: "row" }, msg, h("button", { type: "submit" }, "Send")));
  /** @type {Panel} a text test has no microphone to mute */
  const panel = { status, lines, err, msg, running: (on, textOnly) => {
    voice.hidden = typed.hidden = on;
    stop.hidden = !on;
    mute.hidden = !on || textOnly;
    msg.disabled = !on;
  } };
  const start = (/** @type {boolean} */ textOnly) => {
    err.textContent = "";
    lines.replaceChildren();
    const client = createClient({ token: sessionToken() || "", endpoint: testSessionURL(a.id) });
    const session = test = client.startSession({ agentId: a.id, textOnly });
    // Leaving the page (or drawing it again) ends the test.
    onLeave(() => session.end("page"));
    follow(session, panel, textOnly);
    panel.running(true, textOnly);
    // A text test can be typed into while it connects: the SDK sends the
    // message once the session is live.
    if (textOnly) msg.focus();
  };
  voice.addEventListener("click", () => start(false));
  typed.addEventListener("click", () => start(true));
  mute.addEventListener("click", () => {
    if (!test) return;
    test.mute(!test.muted);
    mute.setAttribute("aria-pressed", String(test.muted));
    mute.textContent = test.muted ? "Unmute" : "Mute";
  });
  stop.addEventListener("click", () => test && test.end("client"));
  send.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (test && test.sendText(msg.value)) msg.value = "";
  });
  return h("div", { class: "card test-panel" }, h("h2", {}, "Test " + a.name),
    via ? h("p", { class: "muted" }, `Talks to ${via} with ${a.model}, the agent's tools included. Tests are kept with the sessions, from origin console; no channel or key is needed.`)
      : notice(`The ${a.provider === "gemini" ? "Gemini" : "OpenAI"}-compatible provider of this agent has no API key on this server nor a provider account in this project (Projects page), so a test cannot connect.`, "error"),
    a.version && a.version !== a.published_version
      ? h("p", { class: "muted", id: "test-version" }, `Tests run the latest saved settings, version ${a.version}; conversations on channels and numbers run version ${a.published_version} until it is published.`)
      : null,
    h("div", { class: "row" }, voice, typed, mute, stop), status, err, lines, send);
}
