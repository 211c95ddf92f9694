// @ts-check
// The agent's Phone tab (buy or release its number, place a test call,
// call it from the browser) and a phone call's page.

import {
  availableNumbers, buyNumber as buy, getCall, getConversation, hangUp, listNumbers, placeCall, releaseNumber, startTestCall,
} from "../api.js";
import { h, flat, table, confirmAction, when, transcript, errorText } from "../dom.js";
import { form } from "../forms.js";
import { can, features, project, render } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {Agent, OutboundCall, PhoneNumber} from "../types.js" */

const CALL = "/console/call.js";
const finalCall = ["completed", "busy", "failed", "no-answer", "canceled"];

/**
 * buyNumber buys a number for the agent. A real carrier charges for it,
 * so the console asks first; the sandbox's pretend numbers cost nothing.
 * @param {number} pid @param {Agent} a @param {string} number
 */
async function buyNumber(pid, a, number) {
  if (!features().sandbox_carrier &&
    !(await confirmAction(`Buy ${number} for ${a.name}? The carrier charges its monthly price for the number to your carrier account until you release it.`, "Buy number"))) return false;
  await buy(pid, { phone_number: number, agent_id: a.id });
  return true;
}

/** pretendNote says what a sandbox number is, with the command that calls it. @param {string | null} number */
function pretendNote(number) {
  return h("p", { class: "notice" }, h("b", {}, "Sandbox: "),
    "numbers here are pretend, from agentline's built-in fake carrier: no phone can dial them and nothing is charged. ",
    ["Call ", number ? "this one" : "one", " with ", h("code", {}, `agentline call --to ${number || "NUMBER"}`), " or with "],
    h("b", {}, "Call this agent"), " below.");
}

/** numberSearch finds numbers to buy for the agent. @param {number} pid @param {Agent} a */
function numberSearch(pid, a) {
  const found = h("div", { "aria-live": "polite" });
  const search = form([
    { name: "area_code", label: "Area code", inputmode: "numeric", placeholder: "415", hint: "US local numbers; three digits, or empty for any." },
  ], "Search numbers", async (v) => {
    const list = await availableNumbers(pid, v.area_code);
    const err = h("p", { class: "form-error", role: "alert" });
    found.replaceChildren(table(["Number", "Place", ""], list.map((n) => h("tr", {},
      h("td", {}, n.phone_number), h("td", {}, [n.locality, n.region].filter(Boolean).join(", ")),
      h("td", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: async (/** @type {MouseEvent} */ ev) => {
        const b = /** @type {HTMLButtonElement} */ (ev.currentTarget);
        b.disabled = true;
        try {
          if (await buyNumber(pid, a, n.phone_number)) render();
        } catch (e) {
          err.textContent = errorText(e);
        } finally {
          b.disabled = false;
        }
      } }, "Buy " + n.phone_number)))), "No numbers available there; try another area code."), err);
  });
  return h("div", { class: "card" }, search, found);
}

/** agentPhone is the agent's Phone tab. @param {PageContext} ctx @param {Agent} a */
export async function agentPhone(ctx, a) {
  const pid = project().id;
  const pretend = features().sandbox_carrier;
  const numbers = await listNumbers(pid);
  const mine = numbers.find((n) => n.agent_id === a.id);
  if (!mine) {
    return h("div", {}, pretend ? pretendNote(null) : null,
      h("p", {}, pretend ? `${a.name} has no phone number. Buying a pretend one links it to this agent.`
        : `${a.name} has no phone number. Buying one charges the carrier account and links the number to this agent.`),
      can("create") ? [numberSearch(pid, a), await browserCall(a)] : null);
  }
  const status = h("div", { "aria-live": "polite" });
  const call = form([
    { name: "to_number", label: "Number to call", type: "tel", placeholder: "+14155550123", hint: "E.164. The agent speaks first.", required: true },
  ], "Place test call", async (v) => {
    const placed = await placeCall(a.id, v);
    watchCall(ctx, a, placed, status);
  });
  return h("div", {},
    h("div", { class: "card" }, h("h2", {}, "Number"), h("p", { class: "number" }, h("b", {}, mine.phone_number), " ", h("span", { class: "status" }, mine.status)),
      pretend ? pretendNote(mine.phone_number) : null, can("delete") ? releaseButton(pid, a, mine) : null),
    can("create") ? [h("div", { class: "card" }, h("h2", {}, "Outbound test call"), call, status), await browserCall(a)] : null);
}

/** releaseButton gives the number back to the carrier, after asking. @param {number} pid @param {Agent} a @param {PhoneNumber} mine */
function releaseButton(pid, a, mine) {
  const release = h("button", { type: "button", class: "danger" }, "Release number");
  const releaseErr = h("p", { class: "form-error", role: "alert" });
  release.addEventListener("click", async () => {
    if (!(await confirmAction(`Release ${mine.phone_number}? It goes back to the carrier and calls to it stop reaching ${a.name}.`, "Release number"))) return;
    try {
      await releaseNumber(pid, mine.id);
      render();
    } catch (e) {
      releaseErr.textContent = errorText(e);
    }
  });
  return [release, releaseErr];
}

/**
 * browserCall is the Phone tab's "Call this agent" card (console/call.js,
 * loaded when the tab opens), on the API's test calls.
 * @param {Agent} agent
 */
async function browserCall(agent) {
  const { callPanel } = /** @type {typeof import("../call.js")} */ (await import(CALL));
  return callPanel({ agent, startTestCall, getConversation, h });
}

/**
 * watchCall shows a call's status, refreshed every second until it ends or
 * the page changes, with a hang-up button while it lasts.
 * @param {PageContext} ctx @param {Agent} a @param {OutboundCall} placed @param {HTMLElement} box
 */
async function watchCall(ctx, a, placed, box) {
  const sid = placed.call_sid;
  const text = h("span", { class: "status live", id: "call-status" }, placed.status);
  const hangErr = h("p", { class: "form-error", role: "alert" });
  const hang = h("button", { type: "button", class: "danger primary" }, "Hang up");
  hang.addEventListener("click", async () => {
    hang.disabled = true;
    try {
      await hangUp(a.id, sid);
    } catch (e) {
      hangErr.textContent = errorText(e);
      hang.disabled = false;
    }
  });
  // Ending a call is a delete: owners only.
  box.replaceChildren(...flat([h("p", {}, "Call ", h("a", { href: `#/calls/${sid}` }, sid), ": ", text), can("delete") ? hang : null, hangErr]));
  while (ctx.live()) {
    await new Promise((r) => setTimeout(r, 1000));
    if (!ctx.live()) return;
    try {
      const c = await getCall(sid);
      text.textContent = c.status + (c.end_reason ? ` (${c.end_reason})` : "");
      if (finalCall.includes(c.status)) {
        text.className = "status";
        hang.remove();
        return;
      }
    } catch (e) {
      hangErr.textContent = errorText(e);
    }
  }
}

/** callPage is a phone call's page, with its log. @param {PageContext} ctx @param {string} sid */
export async function callPage({ show }, sid) {
  const c = await getCall(sid);
  const items = c.events.map((e) => (e.type === "tool_call" ? { kind: "tool", ...(e.data || {}), name: String((e.data && e.data.name) || e.text) }
    : { kind: e.type === "transcript" ? "line" : e.type, role: e.role, text: e.text }));
  show(c.direction === "test" ? "Test call from " + c.from : `Call ${c.direction === "inbound" ? "from " + c.from : "to " + c.to}`,
    h("p", {}, h("a", { href: "#/conversations" }, "← Conversations")),
    h("div", { class: "card" }, h("dl", {},
      [["Call SID", c.call_sid], ["Status", c.status + (c.end_reason ? ` (${c.end_reason})` : "")], ["From", c.from], ["To", c.to],
        ["Started", when(c.started_at)], ["Ended", when(c.ended_at)], ["Duration", c.duration_s === null ? "" : c.duration_s + " s"]]
        .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v || "—")]))),
    h("h2", {}, "Transcript"), transcript(items));
}
