// @ts-check
// The project's API keys, on the projects page: the list (name, role,
// prefix, last use; never a key) for every member, and for owners a form
// that makes a key, shown whole once (until dismissed) with Copy, and
// Revoke.

import { createAPIKey, listAPIKeys, revokeAPIKey } from "../api.js";
import { h, table, confirmAction, copyButton, when, errorText } from "../dom.js";
import { form } from "../forms.js";
import { can, render } from "../router.js";
import { dismissButton, keep, shown } from "../secrets.js";

/** @import {Project, APIKey} from "../types.js" */

/** @type {[string, string][]} */
const roles = [["viewer", "Viewer"], ["editor", "Editor"], ["owner", "Owner"]];

/** apiKeysCard is the card of the project's API keys. @param {Project} p */
export async function apiKeysCard(p) {
  const slot = `api-key:${p.id}`;
  const said = h("p", { role: "status", class: "muted", id: "api-keys-said", tabindex: "-1" });
  const list = h("div", {});
  /** @type {APIKey[]} */
  let keys = [];
  const load = async () => {
    keys = await listAPIKeys(p.id);
    list.replaceChildren(table(["Name", "Role", "Key", "Last used", "State", ""], keys.map((k) => h("tr", { "data-api-key": k.prefix },
      h("td", {}, k.name), h("td", {}, k.role), h("td", {}, h("code", {}, k.prefix + "…")),
      h("td", {}, k.last_used_at ? when(k.last_used_at) : "never"), h("td", {}, state(k)),
      h("td", {}, can("delete") && !k.revoked_at ? revokeButton(k, said, load) : ""))), "No API keys yet."));
  };
  await load();
  const owner = can("delete");
  const create = owner ? form([
    { name: "name", label: "Key name", required: true, hint: "What uses it, e.g. deploy bot." },
    { name: "role", label: "Key role", type: "select", options: roles, value: "viewer" },
    { name: "expires_at", label: "Expires (optional)", type: "date", min: tomorrow(),
      hint: "Empty: it never expires. It stops working at 00:00 UTC on that day." },
  ], "Create key", async (v) => {
    const k = await createAPIKey(p.id, { name: v.name, role: v.role, expires_at: v.expires_at ? new Date(v.expires_at + "T00:00:00Z").toISOString() : undefined });
    keep(slot, k.key || "");
    await render();
    document.getElementById("api-key-made")?.focus();
  }, { label: "Create an API key" }) : null;
  return h("section", { class: "card", id: "api-keys", "aria-labelledby": "api-keys-title" }, h("h2", { id: "api-keys-title" }, "API keys"),
    h("p", { class: "muted" }, "A key acts in this project alone with its role; it never manages members, invitations, keys or provider accounts. ",
      "Send it as ", h("code", {}, "Authorization: Bearer agl_sk_…"), ".", owner ? "" : " Only owners create and revoke keys."),
    madeBox(slot, keys), said, list, create ? [h("h3", {}, "New key"), create] : null);
}

/**
 * madeBox shows the key made just now whole, until it is dismissed: the
 * server keeps only its hash, and the list only its prefix.
 * @param {string} slot @param {APIKey[]} keys
 */
function madeBox(slot, keys) {
  const whole = shown(slot);
  if (!whole) return null;
  const made = keys.find((k) => whole.startsWith(k.prefix));
  const code = h("code", { class: "secret", id: "api-key-shown" }, whole);
  return h("div", { class: "notice", id: "api-key-made", tabindex: "-1", "aria-labelledby": "api-key-made-said" },
    h("p", { id: "api-key-made-said" }, `This is the whole key${made ? ` "${made.name}"` : ""}. It is shown only now, until you dismiss it: `,
      "copy it into your automation's settings. Later only its prefix is shown."),
    h("p", {}, code), h("div", { class: "row" }, copyButton(() => whole, code, "Copy key"), dismissButton(slot)));
}

/** state is a key's revocation or expiry. @param {APIKey} k */
function state(k) {
  if (k.revoked_at) return "revoked " + when(k.revoked_at);
  if (!k.expires_at) return "active";
  return (new Date(k.expires_at) <= new Date() ? "expired " : "expires ") + when(k.expires_at);
}

/** tomorrow is the first day a new key may expire on (the API wants a future time), as YYYY-MM-DD in UTC. */
function tomorrow() {
  return new Date(Date.now() + 86400000).toISOString().slice(0, 10);
}

/** revokeButton revokes k after asking. @param {APIKey} k @param {HTMLElement} said @param {() => Promise<void>} reload */
function revokeButton(k, said, reload) {
  const b = h("button", { type: "button", class: "danger" }, "Revoke", h("span", { class: "sr-only" }, " the key " + k.name));
  b.addEventListener("click", async () => {
    if (!(await confirmAction(`Revoke the key "${k.name}"? Whatever uses it is refused from its next request on.`, "Revoke key"))) return;
    try {
      await revokeAPIKey(k.id);
      // Said once the list shows it, so that what is announced is on screen.
      await reload();
      said.textContent = `The key "${k.name}" is revoked.`;
    } catch (err) {
      said.textContent = errorText(err);
    }
    // The button is gone with its row: the focus goes to what happened.
    said.focus();
  });
  return b;
}
