// @ts-check
// The agent's Tests tab: its test scenarios (add, delete), a button that
// runs them, the runs with each scenario's outcome, transcript, tool calls
// and time per turn, and the comparison with the previous run.

import { createScenario, deleteScenario, getTestRun, listScenarios, listTestRuns, startTestRun } from "../api.js";
import { h, table, confirmAction, notice, errorText, transcript, when } from "../dom.js";
import { form } from "../forms.js";
import { can, render } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {Agent, TestScenario, TestRun, TestResult} from "../types.js" */

const statusText = { pending: "Playing…", passed: "Passed", failed: "Failed", error: "Could not play" };

/** scenarioRow is a scenario with its Delete button. @param {TestScenario} s @param {HTMLElement} box */
function scenarioRow(s, box) {
  const del = h("button", { type: "button", class: "danger", "aria-label": `Delete scenario ${s.name}` }, "Delete");
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete the scenario ${s.name}?`, "Delete scenario"))) return;
    try {
      await deleteScenario(s.id);
      render();
    } catch (e) {
      box.prepend(notice(errorText(e), "error"));
    }
  });
  return h("tr", {}, h("td", {}, h("b", {}, s.name), h("br", {}), h("span", { class: "muted" }, s.persona)),
    h("td", { class: "wrap" }, s.goal), h("td", { class: "wrap" }, s.success_criteria), h("td", {}, String(s.max_turns)),
    h("td", { class: "actions" }, can("delete") ? del : null));
}

/** resultView is one scenario's outcome, its transcript behind a disclosure. @param {TestResult} r */
function resultView(r) {
  /** @type {import("../dom.js").TranscriptItem[]} */
  const items = r.transcript.map((l) => ({ kind: "line", role: l.speaker === "user" ? "user" : "agent", text: l.text }));
  for (const t of r.tool_calls) items.push({ kind: "tool", name: t.name, arguments: t.arguments, output: t.result, is_error: t.is_error });
  const times = r.turn_ms.length ? `; the agent answered in ${r.turn_ms.map((ms) => ms + " ms").join(", ")}` : "";
  return h("li", { class: "test-result " + r.status },
    h("b", {}, r.scenario_name), ": ", h("span", { class: "status" }, statusText[r.status]),
    r.reason ? h("p", {}, r.reason) : null,
    h("p", { class: "muted" }, `${r.turns} turns, ${r.tool_calls.length} tool calls${times}`),
    r.status === "pending" ? null : h("details", {}, h("summary", {}, `Transcript of ${r.scenario_name}`), transcript(items)));
}

/** runView is a run's counts, results and comparison. @param {TestRun} run */
function runView(run) {
  const head = run.status === "completed"
    ? `Run ${run.id}: ${run.passed} passed, ${run.failed} failed, ${run.errors} could not play`
    : `Run ${run.id}: playing…`;
  const cmp = run.comparison;
  const diff = !cmp ? h("p", { class: "muted" }, "No earlier run played these scenarios.")
    : table(["Scenario", `Run ${cmp.previous_run_id}`, `Run ${run.id}`], cmp.scenarios.map((d) =>
      h("tr", { class: d.changed ? "changed" : "" }, h("td", {}, d.name), h("td", {}, d.previous || "not played"),
        h("td", {}, d.current + (d.changed ? " (changed)" : "")))), "");
  return h("section", { class: "card", "aria-label": `Test run ${run.id}` }, h("h2", {}, head),
    h("p", { class: "muted" }, `Started ${when(run.created_at)}` + (run.version ? `, version ${run.version}` : "")),
    h("ol", { class: "test-results", "aria-live": "polite" }, (run.results || []).map(resultView)),
    h("h3", {}, "Compared with the last run"), diff);
}

/**
 * follow shows the run in the page's #test-run until it completes
 * (bounded), looked up on every poll: the page may have been drawn again
 * meanwhile. It stops when the tab is left or another run is shown.
 * @param {number} id
 */
async function follow(id) {
  following = id;
  for (let i = 0; i < 600 && following === id; i++) {
    const run = await getTestRun(id).catch((e) => (document.getElementById("test-run")?.replaceChildren(notice(errorText(e), "error")), null));
    const box = document.getElementById("test-run");
    if (!run || !box || following !== id) return;
    box.replaceChildren(runView(run));
    if (run.status === "completed") return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** following is the run #test-run shows. */
let following = 0;

/** agentTests is the agent's Tests tab. @param {PageContext} ctx @param {Agent} a */
export async function agentTests(ctx, a) {
  const [scenarios, runs] = await Promise.all([listScenarios(a.id), listTestRuns(a.id)]);
  const box = h("div", {});
  const current = h("div", { id: "test-run" });
  const past = runs.test_runs.slice().reverse();
  const runButton = h("button", { type: "button", class: "primary", disabled: scenarios.length ? null : true }, "Run all scenarios");
  runButton.addEventListener("click", async () => {
    try {
      const run = await startTestRun(a.id, {});
      follow(run.id);
    } catch (e) {
      current.replaceChildren(notice(errorText(e), "error"));
    }
  });
  const history = past.map((r) => h("tr", {},
    h("td", {}, h("button", { type: "button", class: "link", "aria-label": `Show test run ${r.id}`, onclick: () => follow(r.id) }, `Run ${r.id}`)),
    h("td", {}, when(r.created_at)), h("td", {}, r.status === "completed" ? `${r.passed} passed, ${r.failed} failed, ${r.errors} errors` : "playing…")));
  if (past.length) setTimeout(() => follow(past[0].id));
  return h("div", {}, box,
    h("p", { class: "muted" }, "A simulated person with each scenario's persona and goal talks to this agent (its model, tools and knowledge); a judge reads the transcript against the success criteria."),
    table(["Scenario", "Goal", "Success criteria", "Max turns", ""], scenarios.map((s) => scenarioRow(s, box)), "No scenarios yet: add one below."),
    can("create") ? h("div", { class: "actions" }, runButton) : null,
    current,
    h("h2", {}, "Past runs"), table(["Run", "Started", "Outcome"], history, "No runs yet."),
    can("create") ? h("div", { class: "card" }, h("h2", {}, "New scenario"), form([
      { name: "name", label: "Name", required: true, placeholder: "order status" },
      { name: "persona", label: "Persona", type: "textarea", required: true, hint: "Who the simulated person is." },
      { name: "goal", label: "Goal", type: "textarea", required: true, hint: "What they want from the agent." },
      { name: "success_criteria", label: "Success criteria", type: "textarea", required: true, hint: "What the judge checks in the transcript." },
      { name: "max_turns", label: "Max turns", type: "number", min: 1, value: 6 },
    ], "Add scenario", async (v) => {
      await createScenario(a.id, v);
      render();
    })) : null);
}
