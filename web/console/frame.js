// @ts-check
// The frame around every page: the header (project switch, navigation,
// the user's account, sign out) and the banners that say when the agents
// have no real model to talk to.

import { listAgents, listProviderAccounts } from "./api.js";
import { h, flat } from "./dom.js";
import { me, maybeProject, projects, render, setProject, signOut } from "./router.js";

/** @type {[string, string][]} the navigation's sections: hash and text */
const sections = [
  ["agents", "Agents"], ["channels", "Channels"], ["campaigns", "Campaigns"], ["conversations", "Conversations"],
  ["leads", "Leads"], ["analytics", "Analytics"], ["webhooks", "Webhooks"], ["members", "Members"], ["audit", "Audit log"], ["projects", "Projects"],
];

/** header draws the page's header, section marked current. @param {string} section */
export function header(section) {
  const top = /** @type {HTMLElement} */ (document.getElementById("top"));
  top.replaceChildren(h("a", { class: "brand", href: "#/agents" }, "agentline"));
  const m = me();
  if (!m) return;
  const list = projects(), current = maybeProject();
  const select = h("select", { id: "project-switch", "aria-label": "Project" }, list.map((p) => h("option", { value: p.id }, p.name)));
  if (current) select.value = String(current.id);
  select.addEventListener("change", () => {
    setProject(Number(select.value));
    location.hash = "#/agents";
    render();
  });
  const nav = h("nav", { "aria-label": "Console" },
    // The audit log is its owners' alone.
    sections.filter(([id]) => id !== "audit" || current?.role === "owner")
      .map(([id, text]) => h("a", { href: "#/" + id, "aria-current": section === id ? "page" : null }, text)));
  const out = h("button", { type: "button", onclick: signOut }, "Sign out");
  const account = h("a", { href: "#/account", "aria-current": section === "account" ? "page" : null, title: "Your account" }, m.user.email);
  const admin = m.user.admin ? h("a", { href: "#/admin", "aria-current": section === "admin" ? "page" : null }, "Accounts") : null;
  // flat drops the missing project switch (append would print "null").
  top.append(...flat([list.length ? select : null, nav, h("span", { class: "user" }, ...flat([admin, account, out]))]));
}

/**
 * banners says, on every page, when the agents have no real model to talk
 * to: the sandbox is on, or a provider the project's agents use has no key.
 */
export async function banners() {
  const box = /** @type {HTMLElement} */ (document.getElementById("banners"));
  const m = me(), current = maybeProject();
  const f = m ? m.features : null;
  const out = [];
  if (f && f.sandbox) out.push(h("p", { class: "banner" }, h("b", {}, "Sandbox: "), "a pretend provider. Set OPENAI_API_KEY to talk to a real model."));
  if (f && current) {
    const [agents, own] = await Promise.all([listAgents(current.id).catch(() => []), listProviderAccounts(current.id).catch(() => [])]);
    const mine = (/** @type {string} */ kind) => own.some((x) => x.kind === kind);
    /** @type {[string, string, string, boolean][]} */
    const providers = [["openai", "OpenAI-compatible", "OPENAI_API_KEY", f.openai_configured || f.sandbox || mine("openai")],
      ["gemini", "Gemini-compatible", "GEMINI_API_KEY", f.gemini_configured || mine("gemini")]];
    const missing = providers.filter(([p, , , ok]) => !ok && agents.some((a) => a.provider === p));
    for (const [p, name, env] of missing) {
      const who = agents.filter((a) => a.provider === p).map((a) => a.name).join(", ");
      out.push(h("p", { class: "banner warn" }, h("b", {}, `No ${name} provider: `), `${env} is not set and the project has no account of its own (Projects page), so ${who} cannot talk yet.`));
    }
  }
  box.replaceChildren(...out);
}
