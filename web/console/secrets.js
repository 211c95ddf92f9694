// @ts-check
// A secret is whole on screen only when it is made (a webhook's signing
// secret, a channel's key, an invitation or reset link): agentline keeps
// just its hash. So it stays, through every redraw of its page and visits
// to others, until the user dismisses it; signing out or closing the tab
// forgets it too. A slot names whose it is ("key:3").

import { h } from "./dom.js";
import { render } from "./router.js";

/** @type {Map<string, string | Node>} */
const kept = new Map();

/** keep holds value (the secret, or a node that shows it) under slot. @param {string} slot @param {string | Node} value */
export function keep(slot, value) {
  kept.set(slot, value);
}

/** shown is the secret slot holds, or undefined. @param {string} slot */
export function shown(slot) {
  const v = kept.get(slot);
  return typeof v === "string" ? v : undefined;
}

/** forget drops slot's secret; without a slot, every one (signing out). @param {string} [slot] */
export function forget(slot) {
  if (slot === undefined) kept.clear();
  else kept.delete(slot);
}

/** dismissButton forgets slot's secret and draws the page without it. @param {string} slot */
export function dismissButton(slot) {
  return h("button", { type: "button", onclick: () => { forget(slot); render(); } }, "Dismiss");
}

/** shownBox is the node slot holds, with its Dismiss button, or null. @param {string} slot @param {string} [id] */
export function shownBox(slot, id = "link-shown") {
  const node = kept.get(slot);
  if (!node) return null;
  return h("div", { id, class: "notice", role: "status" }, node, h("p", {}, dismissButton(slot)));
}
