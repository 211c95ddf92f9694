// @ts-check
// The projects page: the user's projects, the current one's settings
// (name, the name shown to visitors, how long call recordings are kept,
// delete), its provider accounts (providers.js) and a new project.

import { createProject, deleteProject, updateProject } from "../api.js";
import { h, notice, table, when, confirmAction, errorText } from "../dom.js";
import { form } from "../forms.js";
import { providersCard } from "./providers.js";
import { apiKeysCard } from "./apikeys.js";
import { forgetProject, loadProjects, maybeProject, projects, refreshFrame, render, setProject } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {Project} from "../types.js" */

/** @param {PageContext} ctx */
export async function projectsPage({ show }) {
  // Projects made elsewhere (another tab, the API) show up here.
  await loadProjects();
  refreshFrame();
  const list = projects(), current = maybeProject();
  const rows = list.map((p) => h("tr", {},
    h("td", {}, p.name), h("td", {}, p.role || ""), h("td", {}, when(p.created_at)),
    h("td", { class: "actions" }, h("button", { type: "button", onclick: () => { setProject(p.id); location.hash = "#/agents"; } }, "Open"))));
  show("Projects",
    list.length ? null : notice("Create your first project: it holds your agents, channels and members."),
    table(["Name", "Your role", "Created", ""], rows, "No projects yet."),
    current ? projectSettings(current) : null,
    current ? await providersCard(current) : null,
    current ? await apiKeysCard(current) : null,
    h("div", { class: "card" }, h("h2", {}, "New project"), form([
      { name: "name", label: "Name", required: true },
      { name: "branding.display_name", label: "Name shown to visitors", hint: "Optional; the widget's title." },
    ], "Create project", async (v) => {
      if (!v.branding.display_name) delete v.branding;
      const p = await createProject(v);
      await loadProjects();
      setProject(p.id);
      location.hash = "#/agents";
      render(true);
    })));
}

/**
 * projectSettings renames the current project, sets how long its call
 * recordings are kept, and deletes it (owners).
 * @param {Project} p
 */
function projectSettings(p) {
  const del = h("button", { type: "button", class: "danger" }, "Delete project");
  const err = h("p", { class: "form-error", role: "alert" });
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete ${p.name} with all its agents, channels, sessions and leads? This cannot be undone.`, "Delete project"))) return;
    try {
      await deleteProject(p.id);
      forgetProject();
      await loadProjects();
      render(true);
    } catch (e) {
      err.textContent = errorText(e);
    }
  });
  return h("div", { class: "card" }, h("h2", {}, "This project: " + p.name),
    p.role === "viewer" ? null : form([
      { name: "name", label: "Project name", value: p.name, required: true },
      { name: "branding.display_name", label: "Name shown to visitors", value: (p.branding && p.branding.display_name) || "",
        hint: "The widget's title and the form page's heading; empty shows the project name." },
      { name: "recording_retention_days", label: "Keep call recordings (days)", type: "number", min: 0, value: p.recording_retention_days ?? 0,
        hint: "Recordings older than this are deleted; 0 keeps them. Agents record only with Record phone calls on." },
    ], "Save project", async (v) => {
      await updateProject(p.id, v);
      await loadProjects();
      render();
    }),
    p.role === "owner" ? h("div", { class: "actions" }, del, err) : null);
}
