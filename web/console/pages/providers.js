// @ts-check
// The project's provider accounts, on the projects page: for each provider
// kind, the project's own account (its base URL and the key's last four
// characters, never the key) or the deployment's, with a form to set one
// and Remove (owners; the provider checks the key when it is saved).

import { deleteProviderAccount, listProviderAccounts, putProviderAccount } from "../api.js";
import { h, confirmAction, when, errorText } from "../dom.js";
import { form } from "../forms.js";
import { can } from "../router.js";

/** @import {Project, ProviderAccount} from "../types.js" */

/** The provider kinds, with how the page names them. @type {[ "openai" | "gemini", string, string][]} */
const KINDS = [["openai", "OpenAI-compatible", "https://api.openai.com"], ["gemini", "Gemini-compatible", "https://generativelanguage.googleapis.com"]];

/** providersCard is the card of the project's provider accounts. @param {Project} p */
export async function providersCard(p) {
  const said = h("p", { role: "status", class: "muted", id: "providers-said" });
  const body = h("div", {});
  const load = async () => {
    /** @type {ProviderAccount[]} */
    const accounts = await listProviderAccounts(p.id);
    body.replaceChildren(...KINDS.map(([kind, name, example]) => kindSection(p, kind, name, example, accounts.find((a) => a.kind === kind), said, load)));
  };
  await load();
  return h("section", { class: "card", id: "providers", "aria-labelledby": "providers-title" }, h("h2", { id: "providers-title" }, "Provider accounts"),
    h("p", { class: "muted" }, "The project's agents use its own provider account when it has one, and this server's otherwise. ",
      "A key is checked with the provider when it is saved, stored encrypted, and shown only by its last four characters."),
    said, body);
}

/**
 * kindSection shows one kind's account, and lets owners set or remove it.
 * @param {Project} p @param {"openai" | "gemini"} kind @param {string} name @param {string} example
 * @param {ProviderAccount | undefined} account @param {HTMLElement} said @param {() => Promise<void>} reload
 */
function kindSection(p, kind, name, example, account, said, reload) {
  const title = h("h3", { id: "provider-" + kind }, name);
  const state = account
    ? h("p", { "data-provider": kind }, `Own account at ${account.base_url}, key ending in ${account.key_last4 || "(short key)"}, saved ${when(account.updated_at)}.`)
    : h("p", { "data-provider": kind, class: "muted" }, "Uses this server's account.");
  let remove = null;
  if (account && can("delete")) {
    remove = h("button", { type: "button", class: "danger" }, "Remove", h("span", { class: "sr-only" }, " the " + name + " account"));
    remove.addEventListener("click", async () => {
      if (!(await confirmAction(`Remove the project's ${name} account? Its agents use this server's account again.`, "Remove account"))) return;
      try {
        await deleteProviderAccount(p.id, kind);
        said.textContent = `The ${name} account is removed.`;
        await reload();
      } catch (err) {
        said.textContent = errorText(err);
      }
    });
  }
  const set = can("delete") ? form([
    { name: "api_key", label: "API key", type: "password", required: true, autocomplete: "off", hint: "Checked with the provider before it is saved." },
    { name: "base_url", label: "Base URL", type: "url", value: account ? account.base_url : "", placeholder: example,
      hint: "Empty: this server's base URL for the kind." },
  ], account ? "Replace account" : "Save account", async (v, f) => {
    const a = await putProviderAccount(p.id, kind, { api_key: v.api_key, base_url: v.base_url || undefined });
    said.textContent = `The ${name} account is saved (key ending in ${a.key_last4}).`;
    f.reset();
    await reload();
  }, { label: "Set the " + name + " account" }) : null;
  return h("div", { class: "provider", "aria-labelledby": "provider-" + kind, role: "group" }, title, state,
    remove ? h("div", { class: "actions" }, remove) : null, set);
}
