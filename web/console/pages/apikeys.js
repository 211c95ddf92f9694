// @ts-check
// The project's API keys, on the projects page: the list (name, role,
// prefix, last use; never a key) for every member, and for owners a form
// that makes a key, shown once with Copy, and Revoke.

import { createAPIKey, listAPIKeys, revokeAPIKey } from "../api.js";
import { h, table, confirmAction, copyButton, when, errorText } from "../dom.js";
import { form } from "../forms.js";
import { can } from "../router.js";

/** @import {Project, APIKey} from "../types.js" */

/** @type {[string, string][]} */
const roles = [["viewer", "Viewer"], ["editor", "Editor"], ["owner", "Owner"]];

/** apiKeysCard is the card of the project's API keys. @param {Project} p */
export async function apiKeysCard(p) {
  const said = h("p", { role: "status", class: "muted", id: "api-keys-said" });
  const shown = h("div", {});
  const list = h("div", {});
  const load = async () => {
    /** @type {APIKey[]} */
    const keys = await listAPIKeys(p.id);
    list.replaceChildren(table(["Name", "Role", "Key", "Last used", "State", ""], keys.map((k) => h("tr", { "data-api-key": k.prefix },
      h("td", {}, k.name), h("td", {}, k.role), h("td", {}, h("code", {}, k.prefix + "…")),
      h("td", {}, k.last_used_at ? when(k.last_used_at) : "never"),
      h("td", {}, k.revoked_at ? "revoked " + when(k.revoked_at) : k.expires_at ? "expires " + when(k.expires_at) : "active"),
      h("td", {}, can("delete") && !k.revoked_at ? revokeButton(k, said, load) : ""))), "No API keys yet."));
  };
  await load();
  const create = can("delete") ? form([
    { name: "name", label: "Key name", required: true, hint: "What uses it, e.g. deploy bot." },
    { name: "role", label: "Key role", type: "select", options: roles, value: "viewer" },
    { name: "expires_at", label: "Expires (optional)", type: "date" },
  ], "Create key", async (v, f) => {
    const k = await createAPIKey(p.id, { name: v.name, role: v.role, expires_at: v.expires_at ? new Date(v.expires_at + "T00:00:00Z").toISOString() : undefined });
    const code = h("code", { class: "secret", id: "api-key-shown" }, k.key || "");
    shown.replaceChildren(h("p", {}, `The key "${k.name}" is shown only now: copy it into your automation's settings.`),
      h("p", {}, code, " ", copyButton(() => k.key || "", code, "Copy key")));
    f.reset();
    await load();
  }, { label: "Create an API key" }) : null;
  return h("section", { class: "card", id: "api-keys", "aria-labelledby": "api-keys-title" }, h("h2", { id: "api-keys-title" }, "API keys"),
    h("p", { class: "muted" }, "A key acts in this project alone with its role; it never manages members, invitations, keys or provider accounts. ",
      "Send it as Authorization: Bearer agl_sk_…"),
    said, shown, list, create);
}

/** revokeButton revokes k after asking. @param {APIKey} k @param {HTMLElement} said @param {() => Promise<void>} reload */
function revokeButton(k, said, reload) {
  const b = h("button", { type: "button", class: "danger" }, "Revoke", h("span", { class: "sr-only" }, " the key " + k.name));
  b.addEventListener("click", async () => {
    if (!(await confirmAction(`Revoke the key "${k.name}"? Whatever uses it is refused from its next request on.`, "Revoke key"))) return;
    try {
      await revokeAPIKey(k.id);
      said.textContent = `The key "${k.name}" is revoked.`;
      await reload();
    } catch (err) {
      said.textContent = errorText(err);
    }
  });
  return b;
}
