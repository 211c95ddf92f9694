// @ts-check
// The agent's Tools tab (its webhook tools: add, edit with a parameters
// builder, delete) and Knowledge tab (documents: upload, list, delete, try
// a search).

import { createTool, deleteDocument, deleteTool, listDocuments, listTools, searchKnowledge, updateTool, uploadDocument } from "../api.js";
import { blankProperty, rowsBuilder, rowsFromSchema, schemaColumns, schemaFromRows } from "../builder.js";
import { h, table, confirmAction, notice, plural, alertError, errorText } from "../dom.js";
import { form, FieldError } from "../forms.js";
import { can, render } from "../router.js";
import { listButton, mcpForm } from "./mcp-tools.js";

/** @import {PageContext} from "../router.js" */
/** @import {Agent, Tool} from "../types.js" */

const noParameters = { type: "object", properties: {} };

/**
 * toolForm creates a tool (t null) or edits t; done gets the saved tool,
 * or null when the edit is cancelled.
 * @param {Agent} a @param {Tool | null} t @param {(saved: Tool | null) => void} done
 */
function toolForm(a, t, done) {
  const params = rowsBuilder({
    legend: "Parameters", field: "parameters", noun: "parameter", max: 50,
    hint: "What the model sends the tool, as a JSON Schema object.",
    columns: schemaColumns(true), value: t ? t.parameters : noParameters,
    toJSON: (rows) => schemaFromRows(rows, noParameters), fromJSON: rowsFromSchema, blank: blankProperty,
  });
  const label = t ? `Save ${t.name}` : "Add tool";
  const cancel = t ? h("button", { type: "button", onclick: () => done(null) }, "Cancel") : null;
  return form([
    { name: "name", label: "Name", placeholder: "lookup_order", required: true, value: t ? t.name : "" },
    { name: "description", label: "Description", hint: "Tells the model when to call it.", value: t ? t.description : "" },
    { name: "url", label: "URL", type: "url", placeholder: "https://example.com/hooks/order", required: true, value: t ? t.url : "" },
    { name: "method", label: "Method", type: "select", options: [["POST", "POST"], ["GET", "GET"]], value: t ? t.method : "POST" },
    params.el,
  ], label, async (v) => {
    v.parameters = params.read() || noParameters;
    done(t ? await updateTool(t.id, v) : await createTool(a.id, v));
  }, { label: t ? "Edit tool" : "Add tool", extra: cancel });
}

/** toolRow is a tool with its Edit and Delete buttons; box takes the editor. @param {Agent} a @param {Tool} t @param {HTMLElement} box */
function toolRow(a, t, box) {
  const edit = h("button", { type: "button", "aria-label": `Edit ${t.name}` }, "Edit");
  const del = h("button", { type: "button", class: "danger", "aria-label": `Delete ${t.name}` }, "Delete");
  edit.addEventListener("click", () => {
    const card = h("div", { class: "card", id: "tool-editor" }, h("h2", {}, "Edit " + t.name));
    card.append((t.type === "mcp" ? mcpForm : toolForm)(a, t, (saved) => {
      card.remove();
      if (saved) render();
      else edit.focus();
    }));
    box.querySelector("#tool-editor")?.remove();
    box.prepend(card);
    /** @type {HTMLInputElement} */ (card.querySelector("input")).focus();
  });
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete the tool ${t.name}?`, "Delete tool"))) return;
    try {
      await deleteTool(t.id);
      render();
    } catch (e) {
      box.prepend(notice(errorText(e), "error"));
    }
  });
  const props = Object.keys((t.parameters && t.parameters.properties) || {});
  if (t.type === "mcp") {
    const out = h("div", { "aria-live": "polite" });
    const allowed = t.allowed_tools && t.allowed_tools.length ? t.allowed_tools.join(", ") : "all the server's tools";
    return h("tr", {}, h("td", {}, h("b", {}, t.name), h("br", {}), h("span", { class: "muted" }, "MCP server")),
      h("td", {}, "MCP"), h("td", { class: "wrap" }, t.url), h("td", {}, allowed, out),
      h("td", { class: "actions" }, listButton(t, out), can("create") ? edit : null, can("delete") ? del : null));
  }
  return h("tr", {}, h("td", {}, h("b", {}, t.name), h("br", {}), h("span", { class: "muted" }, t.description)),
    h("td", {}, t.method), h("td", { class: "wrap" }, t.url), h("td", {}, props.join(", ") || "none"),
    h("td", { class: "actions" }, can("create") ? edit : null, can("delete") ? del : null));
}

/** agentTools is the agent's tools tab: its webhook tools, each editable. @param {PageContext} ctx @param {Agent} a */
export async function agentTools(ctx, a) {
  const tools = await listTools(a.id);
  const editors = h("div", {});
  const rows = tools.map((t) => toolRow(a, t, editors));
  return h("div", {},
    h("p", { class: "muted" }, "The model calls these HTTP endpoints with the arguments it chose, and the tools of these MCP servers; the answer goes back to it."),
    table(["Tool", "Method", "URL", "Parameters", ""], rows, "No tools yet."), editors,
    can("create") ? h("div", { class: "cols" },
      h("div", { class: "card" }, h("h2", {}, "New webhook tool"), toolForm(a, null, () => render())),
      h("div", { class: "card" }, h("h2", {}, "New MCP server"), mcpForm(a, null, () => render()))) : null);
}

/** agentKnowledge is the agent's knowledge tab. @param {PageContext} ctx @param {Agent} a */
export async function agentKnowledge(ctx, a) {
  const docs = await listDocuments(a.id);
  const rows = docs.map((d) => h("tr", {}, h("td", {}, d.title), h("td", {}, d.content_type), h("td", {}, d.bytes + " B, " + plural(d.chunks, "passage")),
    h("td", { class: "actions" }, !can("delete") ? null : h("button", { type: "button", class: "danger", onclick: async () => {
      if (!(await confirmAction(`Delete the document ${d.title}?`, "Delete document"))) return;
      await deleteDocument(d.id).catch((e) => alertError(e));
      render();
    } }, "Delete"))));
  const results = h("div", { "aria-live": "polite" });
  const upload = form([
    { name: "file", label: "File (text, Markdown or HTML)", type: "file", required: true },
    { name: "title", label: "Title", hint: "Optional; the file's name when empty." },
  ], "Upload", async (v, f) => {
    const file = /** @type {HTMLInputElement} */ (f.querySelector("input[type=file]")).files?.[0];
    if (!file) throw new FieldError("file", "Choose a file to upload.");
    const body = new FormData();
    if (v.title) body.set("title", v.title);
    body.set("file", file);
    await uploadDocument(a.id, body);
    render();
  });
  const search = form([{ name: "q", label: "Search the documents", type: "search", required: true }], "Search", async (v) => {
    const res = await searchKnowledge(a.id, v.q);
    // Scores only compare within one search: show the rank, and a bar
    // relative to the best match.
    const best = Math.max(0, ...res.results.map((r) => r.score));
    results.replaceChildren(res.results.length
      ? h("ol", { class: "matches" }, res.results.map((r, i) => h("li", {}, h("b", {}, r.title), " ",
        h("span", { class: "muted" }, i === 0 ? "(best match)" : `(match ${i + 1})`),
        best > 0 ? h("meter", { min: 0, max: 1, value: Math.max(0, r.score) / best, "aria-label": `Relevance of match ${i + 1}, relative to the best` }) : null,
        h("p", {}, r.text))))
      : h("p", { class: "muted" }, "No passage matches."));
  });
  return h("div", {},
    table(["Title", "Type", "Size", ""], rows, "No documents yet."),
    h("div", { class: "cols" }, can("create") ? h("div", { class: "card" }, h("h2", {}, "Upload a document"), upload) : null,
      h("div", { class: "card" }, h("h2", {}, "Try a search"), search, results)));
}
