// @ts-check
// A channel's key and snippets: the key whole exactly once after it is
// made, then only its prefix, its origins and limits, rotate and revoke;
// the snippets to paste into a site.

import { APIError, createKey, getSnippets, revokeKey, updateKey } from "../api.js";
import { h, flat, notice, copyButton, confirmAction, when, alertError } from "../dom.js";
import { form } from "../forms.js";
import { can, render } from "../router.js";
import { dismissButton, forget, keep } from "../secrets.js";

/** @import {Channel, WidgetKey} from "../types.js" */
/** @import {FieldSpec, FormValues} from "../forms.js" */

/** keySlot is where a channel's new key is kept while it is shown. @param {number} id */
export const keySlot = (id) => `key:${id}`;

/** limits are the key's origins and limits fields. @param {WidgetKey | null} k @returns {FieldSpec[]} */
const limits = (k) => [
  { name: "allowed_origins", label: "Allowed origins", type: "lines", value: k ? k.allowed_origins : [], placeholder: "https://shop.example.com\n*.example.com",
    hint: "One per line; empty allows any site. *.example.com matches its subdomains." },
  { name: "rate_limit_per_minute", label: "Requests per minute", type: "number", min: 1, value: k ? k.rate_limit_per_minute : "" },
  { name: "rate_limit_per_day", label: "Requests per day", type: "number", min: 1, value: k ? k.rate_limit_per_day ?? "" : "", hint: "Empty for no daily limit." },
];

/**
 * keyCard shows the channel's key: whole exactly once after it is made,
 * then only its prefix; its origins and limits; rotate and revoke.
 * @param {Channel} c @param {WidgetKey | null} key @param {string | undefined} whole
 */
export function keyCard(c, key, whole) {
  const box = h("div", { class: "card", id: "key" }, h("h2", {}, "Public key"));
  const generate = async (/** @type {FormValues} */ v) => {
    if (v.rate_limit_per_minute === null) delete v.rate_limit_per_minute;
    const made = await createKey(c.id, v);
    keep(keySlot(c.id), made.key);
    render();
  };
  if (!key) {
    box.append(h("p", {}, "No key yet. Websites use the key to reach this channel's agent; it is public and safe to embed."),
      ...flat([can("create") ? form(limits(null), "Generate key", generate, { label: "New key" }) : null]));
    return box;
  }
  if (whole) {
    const code = h("code", { class: "key", id: "whole-key" }, whole);
    box.append(notice("This is the whole key. It is shown only now, until you dismiss it: copy it into your site. Later only its prefix is shown.", "ok"),
      h("p", {}, code), h("div", { class: "row" }, copyButton(() => whole, code, "Copy key"), dismissButton(keySlot(c.id))));
  } else {
    box.append(h("p", {}, "Key: ", h("code", { id: "key-prefix" }, key.prefix + "…"), h("span", { class: "muted" }, ` made ${when(key.created_at)}` + (key.last_used_at ? `, last used ${when(key.last_used_at)}` : ", never used"))));
  }
  const saved = h("p", { role: "status", class: "muted" });
  box.append(h("h2", {}, "Origins and limits"), form(limits(key), "Save limits", async (v) => {
    await updateKey(c.id, v);
    saved.textContent = "Saved.";
  }, { label: "Origins and limits", extra: saved, need: "create" }));
  const rotate = h("button", { type: "button" }, "Make a new key");
  rotate.addEventListener("click", async () => {
    if (!(await confirmAction("Make a new key? The current key stops working at once on every site that uses it.", "Make a new key"))) return;
    await generate({}).catch((e) => alertError(e));
  });
  const revoke = h("button", { type: "button", class: "danger" }, "Revoke key");
  revoke.addEventListener("click", async () => {
    if (!(await confirmAction("Revoke the key? Every site that uses it stops working.", "Revoke key"))) return;
    await revokeKey(c.id).then(() => forget(keySlot(c.id)), (e) => alertError(e));
    render();
  });
  box.append(h("div", { class: "row" }, can("create") ? rotate : null, can("delete") ? revoke : null));
  return box;
}

/**
 * snippetsCard shows what the API gives to paste: the one script tag and
 * its two-step form with SvcChat.mount (none for a lead capture form) and
 * the iframe, with the whole key in them while it is on screen, else the
 * placeholder for it.
 * @param {Channel} c @param {string | undefined} whole
 */
export async function snippetsCard(c, whole) {
  const box = h("div", { class: "card" }, h("h2", {}, "Snippets"));
  let sn;
  try {
    sn = await getSnippets(c.id);
  } catch (e) {
    // A channel without an agent has nothing to embed yet; the API says so.
    if (!(e instanceof APIError) || e.status !== 400) throw e;
    box.append(notice(e.message));
    return box;
  }
  const fill = (/** @type {string} */ text) => (whole ? text.replaceAll("YOUR_WIDGET_KEY", whole) : text);
  const block = (/** @type {string} */ title, /** @type {string} */ text, /** @type {string} */ id) => {
    if (!text) return null;
    const pre = h("pre", { id }, fill(text));
    return [h("h3", {}, title), pre, copyButton(() => pre.textContent || "", pre, "Copy " + title[0].toLowerCase() + title.slice(1))];
  };
  const keyed = (sn.script + sn.iframe).includes("YOUR_WIDGET_KEY") || whole;
  box.append(h("p", { class: "muted" }, !keyed ? "Paste it into your site's HTML; the form page needs no key."
    : whole ? "Paste one into your site's HTML; they hold the whole key while it is shown above."
      : "Paste one into your site's HTML. YOUR_WIDGET_KEY stands for the key, which agentline does not keep."),
  ...flat([block("Script tag", sn.script, "snippet-script"),
    block("Script tag with SvcChat.mount (explicit options)", sn.script_mount, "snippet-mount"),
    block("Iframe", sn.iframe, "snippet-iframe")]));
  return box;
}
