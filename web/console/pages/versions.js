// @ts-check
// The agent's Versions tab: every save of its conversational settings as a
// numbered version, which one conversations run, how two versions differ
// field by field, and publishing one (an older one rolls back). Editors
// and owners publish; viewers read.

import { getVersion, listVersions, publishVersion } from "../api.js";
import { confirmAction, errorText, h, json, table, when } from "../dom.js";
import { can } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {Agent, AgentVersion, VersionDiff} from "../types.js" */

/** @type {Record<string, string>} */
const fieldNames = {
  instructions: "Instructions", greeting: "Greeting", model: "Model", provider: "Provider", voice: "Voice",
  language: "Language", analysis: "Analysis", tools: "Tools", knowledge_documents: "Knowledge documents",
};

/** diffTable shows a comparison, one row per changed field. @param {VersionDiff} d */
function diffTable(d) {
  const rows = d.changes.map((c) => h("tr", {}, h("th", { scope: "row" }, fieldNames[c.field] || c.field),
    h("td", {}, h("pre", { class: "wrap" }, json(c.from))), h("td", {}, h("pre", { class: "wrap" }, json(c.to)))));
  return h("div", {}, h("h3", { id: "diff-title" }, `Version ${d.from} → version ${d.to}`),
    table(["Field", `Version ${d.from}`, `Version ${d.to}`], rows, "No setting differs between these versions."));
}

/** agentVersions is the agent's Versions tab. @param {PageContext} _ctx @param {Agent} a */
export async function agentVersions(_ctx, a) {
  const status = h("p", { role: "status", class: "muted" });
  const summary = h("p", { id: "versions-summary" });
  const diffOut = h("div", { id: "version-diff", "aria-live": "polite" });
  const tbody = h("tbody", {});
  const more = h("button", { type: "button", hidden: true }, "Show older versions");
  let next = /** @type {string | null} */ (null);

  const describe = () => {
    summary.textContent = `Conversations run version ${a.published_version}; the latest is version ${a.version}.` +
      (a.review_before_publish ? " Saves are drafts until one is published (Settings: Review before publishing)." : " Every save publishes.");
  };

  /** compare shows how version n differs from version m. @param {number} n @param {number} m */
  const compare = async (n, m) => {
    try {
      const v = await getVersion(a.id, n, m);
      if (v.diff) diffOut.replaceChildren(diffTable(v.diff));
    } catch (e) {
      diffOut.replaceChildren(h("p", { role: "alert" }, errorText(e)));
    }
  };

  /** publish makes version n the one conversations run. @param {number} n */
  const publish = async (n) => {
    const verb = n < a.published_version ? "Roll back to" : "Publish";
    if (!(await confirmAction(`${verb} version ${n}? Widgets, numbers and campaigns run it from their next conversation.`, `${verb} version ${n}`))) return;
    try {
      Object.assign(a, await publishVersion(a.id, n));
      status.textContent = `Version ${n} is published.`;
      await load(true);
    } catch (e) {
      status.textContent = errorText(e);
    }
  };

  /** row is one version's line in the history. @param {AgentVersion} v */
  const row = (v) => {
    const published = v.version === a.published_version;
    const newer = a.review_before_publish ? "Draft" : "Not published";
    const state = published ? "Published" : v.version > a.published_version ? newer : "Earlier";
    const actions = [];
    if (v.version > 1) {
      actions.push(h("button", { type: "button", onclick: () => compare(v.version, v.version - 1), "aria-label": `Changes in version ${v.version}` }, "Changes"));
    }
    if (can("create") && !published) {
      const verb = v.version < a.published_version ? "Roll back" : "Publish";
      actions.push(h("button", { type: "button", onclick: () => publish(v.version), "aria-label": `${verb} to version ${v.version}` }, verb));
    }
    return h("tr", {}, h("td", {}, String(v.version)), h("td", {}, when(v.created_at)), h("td", {}, state),
      h("td", {}, String(v.settings.model || "")), h("td", { class: "row" }, actions));
  };

  /** load reads the first page again (fresh) or the next one. @param {boolean} fresh */
  const load = async (fresh) => {
    const page = await listVersions(a.id, fresh ? undefined : next || undefined);
    if (fresh) tbody.replaceChildren();
    tbody.append(...page.versions.map(row));
    next = page.next_cursor;
    more.hidden = !next;
    describe();
  };
  more.addEventListener("click", () => load(false).catch((e) => (status.textContent = errorText(e))));
  await load(true);

  // Any two versions: the select pair names what is compared.
  const pick = (/** @type {string} */ id, /** @type {string} */ text, /** @type {number} */ value) => {
    const sel = h("select", { id }, Array.from({ length: a.version }, (_, i) => h("option", { value: String(a.version - i) }, `Version ${a.version - i}`)));
    sel.value = String(Math.max(1, value));
    return [h("label", { for: id }, text), sel];
  };
  const [toLabel, to] = pick("compare-to", "Compare version", a.version);
  const [fromLabel, from] = pick("compare-from", "with version", a.version - 1);
  const go = h("button", { type: "button" }, "Compare");
  go.addEventListener("click", () => compare(Number(/** @type {HTMLSelectElement} */ (to).value), Number(/** @type {HTMLSelectElement} */ (from).value)));

  return h("div", {},
    h("section", { class: "card", "aria-labelledby": "versions-title" }, h("h2", { id: "versions-title" }, "Versions"), summary, status,
      h("div", { class: "table" }, h("table", {},
        h("thead", {}, h("tr", {}, ["Version", "Saved", "State", "Model"].map((x) => h("th", { scope: "col" }, x)),
          h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Actions")))),
        tbody)),
      more),
    h("section", { class: "card", "aria-labelledby": "compare-title" }, h("h2", { id: "compare-title" }, "Compare"),
      h("div", { class: "cols2" }, h("div", {}, toLabel, to), h("div", {}, fromLabel, from)), go, diffOut));
}
