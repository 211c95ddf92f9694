// @ts-check
// MCP servers on the agent's Tools tab: the form that adds or edits one
// (its token is write-only: left empty, the stored one stays) and "List
// tools", which connects now and shows the tools the model is offered, or
// why there are none.

import { createTool, listMCPTools, updateTool } from "../api.js";
import { h, notice, errorText } from "../dom.js";
import { form } from "../forms.js";

/** @import {Agent, Tool} from "../types.js" */

/**
 * mcpForm creates an MCP source (t null) or edits t; done gets the saved
 * tool, or null when the edit is cancelled.
 * @param {Agent} a @param {Tool | null} t @param {(saved: Tool | null) => void} done
 */
export function mcpForm(a, t, done) {
  const label = t ? `Save ${t.name}` : "Add MCP server";
  const cancel = t ? h("button", { type: "button", onclick: () => done(null) }, "Cancel") : null;
  const hasToken = !!(t && t.headers && t.headers.Authorization);
  return form([
    { name: "name", label: "Name", placeholder: "crm", required: true, value: t ? t.name : "",
      hint: "Prefixes the server's tool names: the model sees crm__find_customer." },
    { name: "url", label: "MCP endpoint (streamable HTTP)", type: "url", placeholder: "https://mcp.example.com/mcp", required: true, value: t ? t.url : "" },
    { name: "token", label: "Authorization header", type: "password", autocomplete: "off",
      placeholder: hasToken ? "stored (leave empty to keep it)" : "Bearer …",
      hint: "Stored encrypted and never shown again." },
    { name: "allowed_tools", label: "Allowed tools", type: "lines", value: t ? t.allowed_tools || [] : [],
      hint: "One of the server's tool names a line; empty offers them all." },
  ], label, async (v) => {
    /** @type {Record<string, any>} */
    const body = { name: v.name, url: v.url, allowed_tools: v.allowed_tools };
    if (v.token) body.headers = { ...(t ? t.headers : {}), Authorization: v.token };
    if (!t) body.type = "mcp";
    done(t ? await updateTool(t.id, body) : await createTool(a.id, body));
  }, { label: t ? "Edit MCP server" : "Add MCP server", extra: cancel });
}

/** listButton is an MCP source's "List tools", showing the answer in out. @param {Tool} t @param {HTMLElement} out */
export function listButton(t, out) {
  const b = h("button", { type: "button", "aria-label": `List the tools of ${t.name}` }, "List tools");
  b.addEventListener("click", async () => {
    b.setAttribute("aria-busy", "true");
    try {
      const res = await listMCPTools(t.id);
      out.replaceChildren(res.error
        ? notice(`${t.name} offers no tools: ${res.error.message} (${res.error.code})`, "error")
        : res.tools.length === 0
          ? notice(`${t.name} lists no tools the agent may use.`, "info")
          : h("ul", { "aria-label": `Tools of ${t.name}` }, res.tools.map((m) => h("li", {}, h("code", {}, m.model_name), " ",
            h("span", { class: "muted" }, m.description)))));
    } catch (e) {
      out.replaceChildren(notice(errorText(e), "error"));
    } finally {
      b.removeAttribute("aria-busy");
    }
  });
  return b;
}
