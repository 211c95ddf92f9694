// agentline console: plain JavaScript on the management API, no framework.
// Its modules (ui.js, editors.js, conversations.js) are bundled into one
// minified script when the server starts (web/bundle.go). Pages are chosen by the location hash (#/agents/3).
// API data only ever reaches the page as text (h() builds the DOM; no
// string is ever parsed as HTML), and the page's Content-Security-Policy allows no inline
// script or style. The session token lives in sessionStorage: it is gone
// when the tab closes and other tabs do not share it.

import {
  hooks, plural, alertError, TOKEN, PROJECT, state, h, s, flat, api, download, query, input, values, form, FieldError, confirmAction, copyButton, notice, when, table, transcript, label, json, filterSelects, filtered, agentOptions,
  keep, shown, forget, dismissButton, answerList, formFields, can,
} from "./ui.js";
import { watchFeatures } from "./features.js";
import { agentSettings, agentTools, catalog, formFieldsBuilder } from "./editors.js";
import { conversationsPage, conversationPage, analyticsPage } from "./conversations.js";
import { webhookRoutes, notifyCard } from "./webhooks.js";
import { membersPage, invitePage, resetPage, forgotCard, adminPage } from "./people.js";

let renderGen = 0;

// ---- the frame: header, navigation, routing -----------------------------

const pages = [
  ["agents", "Agents"], ["channels", "Channels"], ["conversations", "Conversations"],
  ["leads", "Leads"], ["analytics", "Analytics"], ["webhooks", "Webhooks"], ["members", "Members"], ["projects", "Projects"],
];

function header(section) {
  const top = document.getElementById("top");
  top.replaceChildren(h("a", { class: "brand", href: "#/agents" }, "agentline"));
  if (!state.me) return;
  const select = h("select", { id: "project-switch", "aria-label": "Project" },
    state.projects.map((p) => h("option", { value: p.id }, p.name)));
  if (state.project) select.value = String(state.project.id);
  select.addEventListener("change", () => {
    setProject(Number(select.value));
    location.hash = "#/agents";
    render();
  });
  const nav = h("nav", { "aria-label": "Console" }, pages
    .filter(([, , feature]) => !feature || state.me.features.telephony_enabled)
    .map(([id, text]) => h("a", { href: "#/" + id, "aria-current": section === id ? "page" : null }, text)));
  const out = h("button", { type: "button", onclick: signOut }, "Sign out");
  const account = h("a", { href: "#/account", "aria-current": section === "account" ? "page" : null, title: "Your account" }, state.me.user.email);
  const admin = state.me.user.admin ? h("a", { href: "#/admin", "aria-current": section === "admin" ? "page" : null }, "Accounts") : null;
  // flat drops the missing project switch (append would print "null").
  top.append(...flat([state.projects.length ? select : null, nav, h("span", { class: "user" }, ...flat([admin, account, out]))]));
}

// banners says, on every page, when the agents have no real model to talk
// to: the sandbox is on, or a provider the project's agents use has no key.
async function banners() {
  const box = document.getElementById("banners");
  const f = state.me ? state.me.features : null;
  const out = [];
  if (f && f.sandbox) out.push(h("p", { class: "banner" }, h("b", {}, "Sandbox: "), "a pretend provider. Set OPENAI_API_KEY to talk to a real model."));
  if (f && state.project) {
    const agents = await api("GET", `/api/projects/${state.project.id}/agents`).catch(() => []);
    const missing = [["openai", "OpenAI-compatible", "OPENAI_API_KEY", f.openai_configured || f.sandbox],
      ["gemini", "Gemini-compatible", "GEMINI_API_KEY", f.gemini_configured]]
      .filter(([p, , , ok]) => !ok && agents.some((a) => a.provider === p));
    for (const [p, name, env] of missing) {
      const who = agents.filter((a) => a.provider === p).map((a) => a.name).join(", ");
      out.push(h("p", { class: "banner warn" }, h("b", {}, `No ${name} provider: `), `${env} is not set, so ${who} cannot talk yet.`));
    }
  }
  box.replaceChildren(...out);
}

function setProject(id) {
  state.project = state.projects.find((p) => p.id === id) || state.projects[0] || null;
  if (state.project) sessionStorage.setItem(PROJECT, String(state.project.id));
}

async function loadProjects() {
  state.projects = await api("GET", "/api/projects");
  setProject(Number(sessionStorage.getItem(PROJECT)));
}

const routes = [
  [/^#\/projects$/, "projects", projectsPage],
  [/^#\/account$/, "account", accountPage],
  [/^#\/members$/, "members", membersPage],
  [/^#\/admin$/, "admin", adminPage],
  [/^#\/agents$/, "agents", agentsPage],
  [/^#\/agents\/(\d+)(?:\/(settings|test|tools|knowledge|phone))?$/, "agents", agentPage],
  [/^#\/channels$/, "channels", channelsPage],
  [/^#\/channels\/(\d+)$/, "channels", channelPage],
  [/^#\/conversations$/, "conversations", conversationsPage],
  [/^#\/conversations\/([A-Za-z0-9_]+)$/, "conversations", conversationPage],
  [/^#\/calls\/([A-Za-z0-9]+)$/, "conversations", callPage],
  [/^#\/leads$/, "leads", leadsPage],
  [/^#\/analytics$/, "analytics", analyticsPage],
  ...webhookRoutes,
];

// render shows the page of the current hash. Each render has a number;
// a page whose data arrives after the user moved on is dropped.
async function render(focus) {
  const gen = ++renderGen;
  if (state.test) state.test.end("page");
  const main = document.getElementById("main");
  // The page being left stays, dimmed, until the next one has its data.
  main.setAttribute("aria-busy", "true");
  const show = (title, ...nodes) => {
    if (gen !== renderGen) return false;
    main.removeAttribute("aria-busy");
    document.title = title + " · agentline";
    const said = state.openedMessage ? notice(state.openedMessage) : null;
    state.openedMessage = "";
    main.replaceChildren(h("h1", {}, title), ...flat([said, ...nodes]));
    if (focus) {
      // A new page starts at its top, with the focus on it for screen
      // readers and the keyboard's next Tab.
      main.focus({ preventScroll: true });
      scrollTo(0, 0);
    }
    focus = false;
    return true;
  };
  const ctx = { show, live: () => gen === renderGen };
  // Invitation and reset links' pages are public: they work signed out;
  // an invitation also knows who is signed in.
  const link = location.hash.match(/^#\/(invite|reset)\/([A-Za-z0-9_-]+)$/);
  if (link) {
    if (state.token && !state.me) {
      state.me = await api("GET", "/api/me").catch(() => null);
      if (state.me) await loadProjects();
    }
    header();
    return link[1] === "invite" ? invitePage(ctx, link[2]) : resetPage(ctx, link[2]);
  }
  if (!state.token) {
    header();
    document.getElementById("banners").replaceChildren();
    return signInPage(ctx);
  }
  try {
    if (!state.me) {
      state.me = await api("GET", "/api/me");
      await loadProjects();
    }
    let hash = location.hash;
    // The sessions and calls lists became the conversations list.
    if (hash === "#/sessions" || hash === "#/calls") {
      location.replace("#/conversations");
      return;
    }
    if (!state.project && !["#/projects", "#/account", "#/admin"].includes(hash)) hash = "#/projects";
    const route = routes.find(([re]) => re.test(hash));
    if (!route) {
      location.replace("#/agents");
      return;
    }
    header(route[1]);
    banners().catch(() => {});
    await route[2](ctx, ...hash.match(route[0]).slice(1));
  } catch (err) {
    if (!state.token) return;
    show("Something went wrong", notice(err.message, "error"));
  }
}

window.addEventListener("hashchange", () => render(true));

function signedOut(message, email) {
  forget();
  state.token = null;
  state.me = null;
  sessionStorage.removeItem(TOKEN);
  state.signOutMessage = message;
  state.signInEmail = email || "";
  if (/^#\/(invite|reset)\//.test(location.hash)) {
    location.replace("#/agents"); // its hashchange renders
    return;
  }
  render(true);
}

// signedIn keeps a new session token; the next render loads who it is.
function signedIn(token) {
  state.token = token;
  state.me = null;
  sessionStorage.setItem(TOKEN, token);
}

// opened goes to a project just joined, saying message there.
async function opened(message, projectID) {
  state.me = await api("GET", "/api/me");
  await loadProjects();
  setProject(projectID);
  state.openedMessage = message;
  location.replace("#/agents"); // its hashchange renders
}

async function signOut() {
  try {
    await api("POST", "/api/auth/logout");
  } catch {
    // The token is dropped either way.
  }
  signedOut("You are signed out.");
}

// ---- pages --------------------------------------------------------------

function signInPage({ show }) {
  const message = state.signOutMessage;
  state.signOutMessage = "";
  const f = form([
    { name: "email", label: "Email", type: "email", autocomplete: "username", required: true },
    { name: "password", label: "Password", type: "password", autocomplete: "current-password", required: true },
  ], "Sign in", async (v) => {
    const login = await api("POST", "/api/auth/login", v);
    signedIn(login.token);
    if (!location.hash || location.hash === "#/") location.hash = "#/agents";
    render(true);
  });
  const forgot = h("div", {});
  show("Sign in to agentline", message ? notice(message) : null, h("div", { class: "card signin" }, f), forgot);
  api("GET", "/api/auth/methods").then((m) => { if (m.password_reset_by_email) forgot.replaceChildren(forgotCard()); }, () => {});
  const email = f.querySelector("input");
  email.value = state.signInEmail || "";
  state.signInEmail = "";
  (email.value ? f.querySelector("input[type=password]") : email).focus();
}

async function projectsPage({ show }) {
  // Projects made elsewhere (another tab, the API) show up here.
  await loadProjects();
  header("projects");
  const rows = state.projects.map((p) => h("tr", {},
    h("td", {}, p.name), h("td", {}, p.role || ""), h("td", {}, when(p.created_at)),
    h("td", { class: "actions" }, h("button", { type: "button", onclick: () => { setProject(p.id); location.hash = "#/agents"; } }, "Open"))));
  show("Projects",
    state.projects.length ? null : notice("Create your first project: it holds your agents, channels and members."),
    table(["Name", "Your role", "Created", ""], rows, "No projects yet."),
    state.project ? projectSettings() : null,
    h("div", { class: "card" }, h("h2", {}, "New project"), form([
      { name: "name", label: "Name", required: true },
      { name: "branding.display_name", label: "Name shown to visitors", hint: "Optional; the widget's title." },
    ], "Create project", async (v) => {
      if (!v.branding.display_name) delete v.branding;
      const p = await api("POST", "/api/projects", v);
      await loadProjects();
      setProject(p.id);
      location.hash = "#/agents";
      render(true);
    })));
}

// accountPage changes the signed-in user's password.
function accountPage({ show }) {
  const done = h("p", { role: "status" });
  show("Your account", h("p", { class: "muted" }, "Signed in as ", h("b", {}, state.me.user.email), "."),
    h("div", { class: "card" }, h("h2", {}, "Change password"), form([
      { name: "current_password", label: "Current password", type: "password", autocomplete: "current-password", required: true },
      { name: "new_password", label: "New password", type: "password", autocomplete: "new-password", required: true, hint: "At least 8 characters." },
    ], "Change password", async (v, f) => {
      done.textContent = "";
      await api("POST", "/api/me/password", v);
      f.reset();
      done.textContent = "Password changed. Your other sessions are signed out.";
    }), done));
}

// projectSettings renames the current project, sets how long its call
// recordings are kept, and deletes it (owners).
function projectSettings() {
  const p = state.project;
  const del = h("button", { type: "button", class: "danger" }, "Delete project");
  const err = h("p", { class: "form-error", role: "alert" });
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete ${p.name} with all its agents, channels, sessions and leads? This cannot be undone.`, "Delete project"))) return;
    try {
      await api("DELETE", `/api/projects/${p.id}`);
      sessionStorage.removeItem(PROJECT);
      state.project = null;
      await loadProjects();
      render(true);
    } catch (e) {
      err.textContent = e.message;
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
      await api("PATCH", `/api/projects/${p.id}`, v);
      await loadProjects();
      render();
    }),
    p.role === "owner" ? h("div", { class: "actions" }, del, err) : null);
}

// modelList suggests the catalog's models in the new agent's model field.
async function modelList() {
  const cat = await catalog();
  return h("datalist", { id: "models" }, cat.models.map((m) => h("option", { value: m.name })));
}

// checklist is the project's first steps with their live state, each
// linked to where it is done.
async function checklist(agents) {
  const pid = state.project.id, f = state.me.features;
  const channels = await api("GET", `/api/projects/${pid}/channels`);
  // A key that answered a request from its site (last_used_at) means the
  // snippet runs on a real page.
  const keys = await Promise.all(channels.slice(0, 20).map((c) => api("GET", `/api/channels/${c.id}/key`).catch(() => null)));
  const numbers = f.telephony_enabled ? await api("GET", `/api/projects/${pid}/telephony/numbers`).catch(() => []) : [];
  const endpoints = await api("GET", `/api/projects/${pid}/webhooks`).then((r) => r.webhooks, () => []);
  const widget = channels.find((c) => c.type === "voice_widget") || channels[0];
  const items = [
    [f.openai_configured || f.gemini_configured, f.sandbox ? "A provider: the sandbox, a pretend one; set OPENAI_API_KEY (or GEMINI_API_KEY) for a real model"
      : "A provider: set OPENAI_API_KEY or GEMINI_API_KEY on the server", null],
    [agents.length > 0, "An agent", agents.length ? `#/agents/${agents[0].id}/test` : "#/agents", agents.length ? "Try it" : "Create one"],
    [channels.length > 0, "A channel: a website widget or a web form", channels.length ? `#/channels/${channels[0].id}` : "#/channels", channels.length ? "Open" : "Create one"],
    [keys.some((k) => k && k.last_used_at), "The snippet seen on a real site", widget ? `#/channels/${widget.id}` : "#/channels", "Snippets"],
  ];
  if (f.telephony_enabled) {
    items.push([numbers.length > 0, "A phone number", agents.length ? `#/agents/${agents[0].id}/phone` : "#/agents", "Buy one"]);
  }
  // The webhooks section is the console's #/webhooks page.
  items.push([endpoints.some((e) => e.enabled), "A webhook endpoint: your systems hear of each conversation", "#/webhooks", endpoints.length ? "Webhooks" : "Add one"]);
  const done = items.filter(([ok]) => ok).length;
  return h("section", { class: "card", "aria-labelledby": "checklist-title" },
    h("h2", { id: "checklist-title" }, `Get started: ${done} of ${items.length} done`),
    h("ul", { class: "checklist" }, items.map(([ok, text, href, link]) => h("li", { class: ok ? "done" : "" },
      h("span", { class: "mark" }, ok ? "Done" : "To do"), h("span", {}, text, href ? [" · ", h("a", { href }, link)] : null)))));
}

async function agentsPage({ show }) {
  const agents = await api("GET", `/api/projects/${state.project.id}/agents`);
  const rows = agents.map((a) => h("tr", {},
    h("td", {}, h("a", { href: `#/agents/${a.id}` }, a.name)), h("td", {}, a.model), h("td", {}, a.voice), h("td", {}, a.language)));
  show("Agents", await checklist(agents),
    table(["Name", "Model", "Voice", "Language"], rows, "No agents yet: create one below."),
    !can("create") ? null : h("div", { class: "card", id: "new-agent" }, h("h2", {}, "New agent"), await modelList(), form([
      { name: "name", label: "Name", required: true },
      { name: "model", label: "Model", value: "gpt-realtime", list: "models", hint: "gpt-realtime* (OpenAI-compatible) or gemini-*live* / *native-audio* (Gemini-compatible)." },
      { name: "instructions", label: "Instructions", type: "textarea", hint: "The system prompt." },
    ], "Create agent", async (v) => {
      const a = await api("POST", `/api/projects/${state.project.id}/agents`, v);
      location.hash = `#/agents/${a.id}`;
    })));
}

async function agentPage(ctx, id, tab = "settings") {
  const agent = await api("GET", `/api/agents/${id}`);
  const tabs = [["settings", "Settings"], ["test", "Test"], ["tools", "Tools"], ["knowledge", "Knowledge"]];
  if (state.me.features.telephony_enabled) tabs.push(["phone", "Phone"]);
  const nav = h("nav", { class: "tabs", "aria-label": "Agent" }, tabs.map(([t, l]) =>
    h("a", { href: `#/agents/${id}/${t}`, "aria-current": t === tab ? "page" : null }, l)));
  const body = await { settings: agentSettings, test: agentTest, tools: agentTools, knowledge: agentKnowledge, phone: agentPhone }[tab](ctx, agent);
  ctx.show(agent.name, nav, body);
}

// agentTest is the Test panel: a conversation with the agent by voice, or
// by text (a text session: no microphone, no audio, the agent writes),
// through the client SDK (/sdk/client.js), on a console test session:
// no channel and no key, the sign-in's token authorizes it. It is stored
// like a widget session, from origin "console".
async function agentTest(ctx, a) {
  if (!can("create")) {
    return h("div", { class: "card test-panel" }, h("h2", {}, "Test " + a.name),
      h("p", { class: "muted" }, "You are a viewer here: a test talks to the agent and is stored, which needs an editor or owner role."));
  }
  const { createClient } = await import("/sdk/client.js");
  const f = state.me.features;
  const via = a.provider === "gemini" ? (f.gemini_configured ? "Gemini" : "")
    : f.sandbox ? "the sandbox (a pretend provider)" : f.openai_configured ? "OpenAI" : "";
  const status = h("p", { class: "muted", role: "status", id: "test-status" }, "Not connected.");
  const lines = h("ol", { class: "transcript", id: "test-transcript", "aria-label": "Test transcript", "aria-live": "polite" });
  const err = h("p", { class: "form-error", role: "alert" });
  const voice = h("button", { type: "button", class: "primary" }, "Talk (microphone)");
  const typed = h("button", { type: "button" }, "Chat by text");
  const mute = h("button", { type: "button", "aria-pressed": "false", hidden: true }, "Mute");
  const stop = h("button", { type: "button", class: "danger", hidden: true }, "End");
  const msg = h("input", { id: "test-message", type: "text", autocomplete: "off", disabled: true });
  const send = h("form", { class: "test-send", "aria-label": "Send a message" },
    h("label", { for: "test-message" }, "Message"), h("div", { class: "row" }, msg, h("button", { type: "submit" }, "Send")));
  // running shows the controls of a live test; a text test has no
  // microphone to mute.
  const running = (on, textOnly) => {
    voice.hidden = typed.hidden = on;
    stop.hidden = !on;
    mute.hidden = !on || textOnly;
    msg.disabled = !on;
  };
  const start = (textOnly) => {
    err.textContent = "";
    lines.replaceChildren();
    const client = createClient({ token: state.token, endpoint: `/api/agents/${a.id}/test-session` });
    const session = state.test = client.startSession({ agentId: a.id, textOnly });
    const shown = new Map();
    const labels = textOnly
      ? { connecting: "Connecting…", listening: "Live by text: type a message.", speaking: "Live by text: the agent is writing.", ended: "Ended." }
      : { connecting: "Connecting…", listening: "Live: listening.", speaking: "Live: the agent is speaking.", ended: "Ended." };
    session.on("state", (st) => {
      status.textContent = labels[st] || st;
      running(st !== "ended", textOnly);
      if (st === "listening" && textOnly && document.activeElement !== msg) msg.focus();
    });
    session.on("transcript", (t) => {
      let li = shown.get(t.id);
      if (!li) shown.set(t.id, (li = h("li", { class: t.role })));
      li.replaceChildren(h("span", { class: "who" }, t.role === "user" ? "You:" : "Agent:"), " ", t.text);
      lines.append(li);
    });
    session.on("toolCall", (c) => lines.append(h("li", { class: "tool" }, h("span", { class: "who" }, "Tool " + c.name),
      " arguments " + json(c.arguments) + " → " + json(c.output) + (c.isError ? " (error)" : ""))));
    session.on("error", (e) => (err.textContent = e.message));
    session.on("end", () => {
      if (state.test === session) state.test = null;
      running(false);
    });
    running(true, textOnly);
    // A text test can be typed into while it connects: the SDK sends the
    // message once the session is live.
    if (textOnly) msg.focus();
  };
  voice.addEventListener("click", () => start(false));
  typed.addEventListener("click", () => start(true));
  mute.addEventListener("click", () => {
    if (!state.test) return;
    state.test.mute(!state.test.muted);
    mute.setAttribute("aria-pressed", String(state.test.muted));
    mute.textContent = state.test.muted ? "Unmute" : "Mute";
  });
  stop.addEventListener("click", () => state.test && state.test.end("client"));
  send.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (state.test && state.test.sendText(msg.value)) msg.value = "";
  });
  return h("div", { class: "card test-panel" }, h("h2", {}, "Test " + a.name),
    via ? h("p", { class: "muted" }, `Talks to ${via} with ${a.model}, the agent's tools included. Tests are kept with the sessions, from origin console; no channel or key is needed.`)
      : notice(`The ${a.provider === "gemini" ? "Gemini" : "OpenAI"}-compatible provider of this agent has no API key on this server, so a test cannot connect.`, "error"),
    h("div", { class: "row" }, voice, typed, mute, stop), status, err, lines, send);
}

async function agentKnowledge(ctx, a) {
  const docs = await api("GET", `/api/agents/${a.id}/knowledge`);
  const rows = docs.map((d) => h("tr", {}, h("td", {}, d.title), h("td", {}, d.content_type), h("td", {}, d.bytes + " B, " + plural(d.chunks, "passage")),
    h("td", { class: "actions" }, !can("delete") ? null : h("button", { type: "button", class: "danger", onclick: async () => {
      if (!(await confirmAction(`Delete the document ${d.title}?`, "Delete document"))) return;
      await api("DELETE", `/api/knowledge/${d.id}`).catch((e) => alertError(e));
      render();
    } }, "Delete"))));
  const results = h("div", { "aria-live": "polite" });
  const upload = form([
    { name: "file", label: "File (text, Markdown or HTML)", type: "file", required: true },
    { name: "title", label: "Title", hint: "Optional; the file's name when empty." },
  ], "Upload", async (v, f) => {
    const file = f.querySelector("input[type=file]").files[0];
    if (!file) throw new FieldError("file", "Choose a file to upload.");
    const body = new FormData();
    if (v.title) body.set("title", v.title);
    body.set("file", file);
    await api("POST", `/api/agents/${a.id}/knowledge`, body);
    render();
  });
  const search = form([{ name: "q", label: "Search the documents", type: "search", required: true }], "Search", async (v) => {
    const res = await api("GET", `/api/agents/${a.id}/knowledge/search` + query({ q: v.q }));
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

const finalCall = ["completed", "busy", "failed", "no-answer", "canceled"];

// buyNumber buys a number for the agent. A real carrier charges for it,
// so the console asks first; the sandbox's pretend numbers cost nothing.
async function buyNumber(pid, a, number) {
  if (!state.me.features.sandbox_carrier &&
    !(await confirmAction(`Buy ${number} for ${a.name}? The carrier charges its monthly price for the number to your carrier account until you release it.`, "Buy number"))) return false;
  await api("POST", `/api/projects/${pid}/telephony/numbers`, { phone_number: number, agent_id: a.id });
  return true;
}

// pretendNote says what a sandbox number is, with the command that calls it.
function pretendNote(number) {
  return h("p", { class: "notice" }, h("b", {}, "Sandbox: "),
    "numbers here are pretend, from agentline's built-in fake carrier: no phone can dial them and nothing is charged. ",
    ["Call ", number ? "this one" : "one", " with ", h("code", {}, `agentline call --to ${number || "NUMBER"}`), " or with "],
    h("b", {}, "Call this agent"), " below.");
}

async function agentPhone(ctx, a) {
  const pid = state.project.id;
  const pretend = state.me.features.sandbox_carrier;
  const numbers = await api("GET", `/api/projects/${pid}/telephony/numbers`);
  const mine = numbers.find((n) => n.agent_id === a.id);
  if (!mine) {
    const found = h("div", { "aria-live": "polite" });
    const search = form([
      { name: "area_code", label: "Area code", inputmode: "numeric", placeholder: "415", hint: "US local numbers; three digits, or empty for any." },
    ], "Search numbers", async (v) => {
      const list = await api("GET", `/api/projects/${pid}/telephony/numbers/available` + query({ area_code: v.area_code }));
      const err = h("p", { class: "form-error", role: "alert" });
      found.replaceChildren(table(["Number", "Place", ""], list.map((n) => h("tr", {},
        h("td", {}, n.phone_number), h("td", {}, [n.locality, n.region].filter(Boolean).join(", ")),
        h("td", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: async (ev) => {
          const b = ev.currentTarget;
          b.disabled = true;
          try {
            if (await buyNumber(pid, a, n.phone_number)) render();
          } catch (e) {
            err.textContent = e.message;
          } finally {
            b.disabled = false;
          }
        } }, "Buy " + n.phone_number)))), "No numbers available there; try another area code."), err);
    });
    return h("div", {}, pretend ? pretendNote(null) : null,
      h("p", {}, pretend ? `${a.name} has no phone number. Buying a pretend one links it to this agent.`
        : `${a.name} has no phone number. Buying one charges the carrier account and links the number to this agent.`),
      can("create") ? [h("div", { class: "card" }, search, found), await browserCall(a)] : null);
  }
  const status = h("div", { "aria-live": "polite" });
  const release = h("button", { type: "button", class: "danger" }, "Release number");
  const releaseErr = h("p", { class: "form-error", role: "alert" });
  release.addEventListener("click", async () => {
    if (!(await confirmAction(`Release ${mine.phone_number}? It goes back to the carrier and calls to it stop reaching ${a.name}.`, "Release number"))) return;
    try {
      await api("DELETE", `/api/projects/${pid}/telephony/numbers/${mine.id}`);
      render();
    } catch (e) {
      releaseErr.textContent = e.message;
    }
  });
  const call = form([
    { name: "to_number", label: "Number to call", type: "tel", placeholder: "+14155550123", hint: "E.164. The agent speaks first.", required: true },
  ], "Place test call", async (v) => {
    const placed = await api("POST", `/api/agents/${a.id}/telephony/outbound`, v);
    watchCall(ctx, a, placed, status);
  });
  return h("div", {},
    h("div", { class: "card" }, h("h2", {}, "Number"), h("p", { class: "number" }, h("b", {}, mine.phone_number), " ", h("span", { class: "status" }, mine.status)),
      pretend ? pretendNote(mine.phone_number) : null, can("delete") ? [release, releaseErr] : null),
    can("create") ? [h("div", { class: "card" }, h("h2", {}, "Outbound test call"), call, status), await browserCall(a)] : null);
}

// browserCall is the Phone tab's "Call this agent" card (console/call.js).
async function browserCall(a) {
  const { callPanel } = await import("/console/call.js");
  return callPanel({ agent: a, api, h });
}

// watchCall shows a call's status, refreshed every second until it ends or
// the page changes, with a hang-up button while it lasts.
async function watchCall(ctx, a, placed, box) {
  const sid = placed.call_sid;
  const text = h("span", { class: "status live", id: "call-status" }, placed.status);
  const hangErr = h("p", { class: "form-error", role: "alert" });
  const hang = h("button", { type: "button", class: "danger primary" }, "Hang up");
  hang.addEventListener("click", async () => {
    hang.disabled = true;
    try {
      await api("DELETE", `/api/agents/${a.id}/telephony/calls/${sid}`);
    } catch (e) {
      hangErr.textContent = e.message;
      hang.disabled = false;
    }
  });
  // Ending a call is a delete: owners only.
  box.replaceChildren(h("p", {}, "Call ", h("a", { href: `#/calls/${sid}` }, sid), ": ", text), can("delete") ? hang : null, hangErr);
  while (ctx.live()) {
    await new Promise((r) => setTimeout(r, 1000));
    if (!ctx.live()) return;
    try {
      const c = await api("GET", `/api/calls/${sid}`);
      text.textContent = c.status + (c.end_reason ? ` (${c.end_reason})` : "");
      if (finalCall.includes(c.status)) {
        text.className = "status";
        hang.remove();
        return;
      }
    } catch (e) {
      hangErr.textContent = e.message;
    }
  }
}

async function channelsPage({ show }) {
  const pid = state.project.id;
  const [channels, agents] = await Promise.all([api("GET", `/api/projects/${pid}/channels`), api("GET", `/api/projects/${pid}/agents`)]);
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const rows = channels.map((c) => h("tr", {}, h("td", {}, h("a", { href: `#/channels/${c.id}` }, c.name || `Channel ${c.id}`)),
    h("td", {}, c.type === "form" ? "Form" : "Voice widget"), h("td", {}, names.get(c.agent_id) || "")));
  show("Channels",
    table(["Name", "Type", "Agent"], rows, "No channels yet."),
    !can("create") ? null : h("div", { class: "card" }, h("h2", {}, "New channel"), agents.length ? form([
      { name: "type", label: "Type", type: "select", options: [["voice_widget", "Voice widget"], ["form", "Web form"]] },
      { name: "name", label: "Name", placeholder: "Website", required: true },
      { name: "agent_id", label: "Agent", type: "select", options: agentOptions(agents, "No agent (lead capture forms)"), value: String(agents[0].id) },
    ], "Create channel", async (v) => {
      v.agent_id = v.agent_id ? Number(v.agent_id) : null;
      const c = await api("POST", `/api/projects/${pid}/channels`, v);
      location.hash = `#/channels/${c.id}`;
    }) : h("p", {}, "Create an agent first: ", h("a", { href: "#/agents" }, "Agents"), ".")));
}

async function channelPage(ctx, id) {
  const pid = state.project.id;
  const [c, agents] = await Promise.all([api("GET", `/api/channels/${id}`), api("GET", `/api/projects/${pid}/agents`)]);
  // null for a channel without a key (the route answers it, not a 404).
  const key = await api("GET", `/api/channels/${id}/key`);
  // A key just made stays on screen until dismissed (ui.js keep), while it
  // is still the channel's key; a reload of the tab shows only its prefix.
  let whole = shown(keySlot(c.id));
  if (whole && !(key && whole.startsWith(key.prefix))) whole = forget(keySlot(c.id));
  // A lead capture form needs no key and shows no widget: its page posts
  // without one.
  const leadCapture = c.type === "form" && c.settings.form.mode === "lead_capture";
  const preview = widgetPreview(c);
  const settings = form([
    { name: "name", label: "Name", value: c.name, required: true },
    { name: "agent_id", label: "Agent", type: "select", options: agentOptions(agents, c.type === "form" ? "No agent" : null), value: c.agent_id ? String(c.agent_id) : "" },
    leadCapture ? [] : [
      { name: "settings.color", label: "Color", type: "color", value: c.settings.color },
      { name: "settings.position", label: "Position", type: "select", options: [["bottom-right", "Bottom right"], ["bottom-left", "Bottom left"]], value: c.settings.position },
      { name: "settings.show_transcript", label: "Show the transcript", type: "checkbox", value: c.settings.show_transcript },
      { name: "settings.show_text_chat", label: "Show text chat", type: "checkbox", value: c.settings.show_text_chat },
    ],
  ].flat(), "Save settings", async (v) => {
    v.agent_id = v.agent_id ? Number(v.agent_id) : null;
    Object.assign(c, await api("PATCH", `/api/channels/${id}`, v));
    saved.textContent = "Saved.";
  }, { label: "Channel settings", need: "create" });
  const saved = h("p", { role: "status", class: "muted" });
  settings.append(saved);
  if (!leadCapture) {
    settings.addEventListener("input", () => preview.update(values(settings).settings));
    settings.addEventListener("change", () => preview.update(values(settings).settings));
  }
  const del = h("button", { type: "button", class: "danger" }, "Delete channel");
  del.addEventListener("click", async () => {
    if (!(await confirmAction(`Delete the channel ${c.name}? Its key stops working at once.`, "Delete channel"))) return;
    await api("DELETE", `/api/channels/${id}`).catch((e) => alertError(e));
    forget(keySlot(c.id));
    location.hash = "#/channels";
  });
  const parts = [
    leadCapture ? h("div", { class: "card" }, h("h2", {}, "Channel"), settings)
      : h("div", { class: "cols" }, h("div", { class: "card" }, h("h2", {}, "Look"), settings), h("div", { class: "card" }, h("h2", {}, "Preview"), preview.el)),
    c.type === "form" ? formSettings(c) : null,
    c.type === "form" ? await notifyCard(c) : null,
    leadCapture ? null : keyCard(c, key, whole),
    await snippetsCard(c, whole),
    can("delete") ? h("div", { class: "card" }, h("h2", {}, "Danger zone"), del) : null,
  ];
  ctx.show(c.name || `Channel ${c.id}`, h("p", { class: "muted" }, c.type === "form" ? "Web form channel" : "Voice widget channel"), parts);
}

// widgetPreview draws the widget as a visitor sees it, updated as the
// settings change.
function widgetPreview(c) {
  const title = (state.project.branding && state.project.branding.display_name) || state.project.name;
  const head = h("div", { class: "pv-head" }, title);
  const lines = h("div", {}, h("div", { class: "pv-line" }, "Agent: Hello! How can I help?"), h("div", { class: "pv-line" }, "You: Where is my order?"));
  // A drawing, not a control: a button inside role=img would be a control
  // nested in an image (axe's nested-interactive).
  const talk = h("span", { class: "pv-talk" }, "Talk");
  const text = h("div", { class: "pv-text" }, h("span", {}, "Type a message"));
  const panel = h("div", { class: "pv-panel" }, head, h("div", { class: "pv-body" }, lines, talk, text));
  const launcher = h("div", { class: "pv-launcher" });
  const el = h("div", { class: "preview", role: "img", "aria-label": "Preview of the widget" }, panel, launcher);
  const update = (st) => {
    for (const x of [head, talk, launcher]) x.style.background = st.color;
    const side = st.position === "bottom-left" ? "left" : "right";
    panel.className = "pv-panel " + side;
    launcher.className = "pv-launcher " + side;
    lines.hidden = !st.show_transcript;
    text.hidden = !st.show_text_chat;
  };
  update(c.settings);
  return { el, update };
}

// formSettings edits settings.form of a form channel (lead capture or live
// chat): fields with the builder (or as JSON), the labels and where submissions are posted.
function formSettings(c) {
  const fs = c.settings.form;
  // The page is drawn again after a save (the mode decides the key and the
  // snippets), so "Saved." waits in state for it.
  const saved = h("p", { role: "status", class: "muted" }, state.formSaved === c.id ? "Saved." : "");
  state.formSaved = null;
  const fields = formFieldsBuilder(fs.fields);
  const card = h("div", { class: "card" }, h("h2", {}, "Form"), form([
    { name: "settings.form.mode", label: "Mode", type: "select", options: [["lead_capture", "Lead capture: store the submissions"], ["live_chat", "Live chat: connect the visitor to the agent"]], value: fs.mode },
    fields.el,
    { name: "settings.form.submit_label", label: "Submit button", value: fs.submit_label || "" },
    { name: "settings.form.thank_you_message", label: "Thank-you message", value: fs.thank_you_message || "" },
    { name: "settings.form.notify_url", label: "Notify URL", type: "url", value: fs.notify_url || "", hint: "Optional; each lead is posted there." },
  ], "Save form", async (v) => {
    v.settings.form.fields = fields.read() || [];
    await api("PATCH", `/api/channels/${c.id}`, { settings: v.settings });
    state.formSaved = c.id;
    render();
  }, { label: "Form settings", extra: saved, need: "create" }));
  return fs.mode === "lead_capture" ? [card, tryForm(c)] : card;
}

// tryForm is the channel's form as visitors get it, posted to the public
// submit endpoint: a way to check the fields, whose answer is a real lead.
function tryForm(c) {
  const fs = c.settings.form;
  const result = h("p", { role: "status", class: "muted" });
  return h("div", { class: "card" }, h("h2", {}, "Try the form"),
    h("p", { class: "muted" }, "Sent like a visitor's submission: it is stored as a lead (and posted to the notify URL)."),
    form(fs.fields.map((fd) => ({
      name: fd.name, label: fd.label + (fd.required ? " *" : ""), required: fd.required,
      type: fd.type === "select" ? "select" : fd.type === "textarea" ? "textarea" : fd.type,
      options: fd.type === "select" ? [["", "Choose…"]].concat(fd.options.map((o) => [o, o])) : undefined,
      value: fd.type === "select" ? "" : undefined,
    })), fs.submit_label, async (v) => {
      result.textContent = "";
      const sent = await api("POST", `/api/channels/form/submit/${c.id}`, v);
      result.textContent = `${fs.thank_you_message} (lead ${sent.lead_id})`;
    }, { label: "Try the form", extra: result }));
}

// keySlot is where a channel's new key is kept while it is shown.
const keySlot = (id) => `key:${id}`;

// keyCard shows the channel's key: whole exactly once after it is made,
// then only its prefix; its origins and limits; rotate and revoke.
function keyCard(c, key, whole) {
  const box = h("div", { class: "card", id: "key" }, h("h2", {}, "Public key"));
  const limits = (k) => [
    { name: "allowed_origins", label: "Allowed origins", type: "lines", value: k ? k.allowed_origins : [], placeholder: "https://shop.example.com\n*.example.com",
      hint: "One per line; empty allows any site. *.example.com matches its subdomains." },
    { name: "rate_limit_per_minute", label: "Requests per minute", type: "number", min: 1, value: k ? k.rate_limit_per_minute : "" },
    { name: "rate_limit_per_day", label: "Requests per day", type: "number", min: 1, value: k ? k.rate_limit_per_day ?? "" : "", hint: "Empty for no daily limit." },
  ];
  const generate = async (v) => {
    if (v.rate_limit_per_minute === null) delete v.rate_limit_per_minute;
    const made = await api("POST", `/api/channels/${c.id}/key`, v);
    keep(keySlot(c.id), made.key);
    render();
  };
  if (!key) {
    box.append(h("p", {}, "No key yet. Websites use the key to reach this channel's agent; it is public and safe to embed."),
      can("create") ? form(limits(null), "Generate key", generate, { label: "New key" }) : null);
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
    await api("PATCH", `/api/channels/${c.id}/key`, v);
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
    await api("DELETE", `/api/channels/${c.id}/key`).then(() => forget(keySlot(c.id)), (e) => alertError(e));
    render();
  });
  box.append(h("div", { class: "row" }, can("create") ? rotate : null, can("delete") ? revoke : null));
  return box;
}

// snippetsCard shows what the API gives to paste: the one script tag and
// its two-step form with SvcChat.mount (none for a lead capture form) and
// the iframe, with the whole key in them while it
// is on screen, else the placeholder for it.
async function snippetsCard(c, whole) {
  const box = h("div", { class: "card" }, h("h2", {}, "Snippets"));
  let sn;
  try {
    sn = await api("GET", `/api/channels/${c.id}/snippets`);
  } catch (e) {
    // A channel without an agent has nothing to embed yet; the API says so.
    if (e.status !== 400) throw e;
    box.append(notice(e.message));
    return box;
  }
  const fill = (text) => (whole ? text.replaceAll("YOUR_WIDGET_KEY", whole) : text);
  const block = (title, text, id) => {
    if (!text) return null;
    const pre = h("pre", { id }, fill(text));
    return [h("h3", {}, title), pre, copyButton(() => pre.textContent, pre, "Copy " + title[0].toLowerCase() + title.slice(1))];
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

async function callPage({ show }, sid) {
  const c = await api("GET", `/api/calls/${sid}`);
  const items = c.events.map((e) => (e.type === "tool_call" ? { kind: "tool", ...(e.data || {}), name: (e.data && e.data.name) || e.text }
    : { kind: e.type === "transcript" ? "line" : e.type, role: e.role, text: e.text }));
  show(c.direction === "test" ? "Test call from " + c.from : `Call ${c.direction === "inbound" ? "from " + c.from : "to " + c.to}`,
    h("p", {}, h("a", { href: "#/conversations" }, "← Conversations")),
    h("div", { class: "card" }, h("dl", {},
      [["Call SID", c.call_sid], ["Status", c.status + (c.end_reason ? ` (${c.end_reason})` : "")], ["From", c.from], ["To", c.to],
        ["Started", when(c.started_at)], ["Ended", when(c.ended_at)], ["Duration", c.duration_s === null ? "" : c.duration_s + " s"]]
        .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v || "—")]))),
    h("h2", {}, "Transcript"), transcript(items));
}

async function leadsPage({ show }) {
  const pid = state.project.id;
  const sel = await filterSelects();
  const names = new Map(sel.channels.map((c) => [c.id, c.name]));
  const fields = new Map(sel.channels.map((c) => [c.id, formFields(c)]));
  const agents = new Map(sel.agents.map((a) => [a.id, a.name]));
  // The export holds the leads the filters select.
  let filters = {};
  const csv = h("button", { type: "button" }, "Export CSV");
  const csvErr = h("span", { class: "form-error", role: "alert" });
  csv.addEventListener("click", async () => {
    csvErr.textContent = "";
    try {
      await download(`/api/projects/${pid}/leads.csv` + query(filters), `leads-${state.project.name}.csv`);
    } catch (e) {
      csvErr.textContent = e.message;
    }
  });
  show("Leads", h("div", { class: "row" }, csv, csvErr), filtered([sel.channel, sel.agent,
    { name: "from", label: "From", type: "date" }, { name: "to", label: "To (exclusive)", type: "date" }], async (v) => {
    filters = v;
    const rows = h("tbody", {});
    const more = h("button", { type: "button", hidden: true }, "Older leads");
    const load = async (offset) => {
      const res = await api("GET", `/api/projects/${pid}/leads` + query({ ...v, offset }));
      rows.append(...res.leads.flatMap(leadRow));
      more.hidden = res.next_offset === null || res.next_offset === undefined;
      more.onclick = () => load(res.next_offset).catch(alertError);
      return res.leads.length;
    };
    if (!(await load(0))) return h("p", { class: "muted" }, "No leads match.");
    return [h("div", { class: "table" }, h("table", { class: "leads" }, h("thead", {}, h("tr", {},
      ["When", "Channel", "Answers", "Details", ""].map((x) => h("th", { scope: "col" }, x)))), rows)), more];
  }));

  function leadRow(l) {
    const del = h("button", { type: "button", class: "danger" }, "Delete");
    del.addEventListener("click", async () => {
      if (!(await confirmAction(`Delete lead ${l.id}? Its answers are gone for good (a live chat's session stays).`, "Delete lead"))) return;
      try {
        await api("DELETE", `/api/leads/${l.id}`);
        render();
      } catch (e) {
        alertError(e);
      }
    });
    // An opened lead's details take a row of their own below it, as wide
    // as the table, so the answers keep their column.
    const more = h("tr", { class: "lead-more", id: `lead-${l.id}-more`, hidden: true }, h("td", { colspan: 5 }));
    return [h("tr", { "data-lead": l.id }, h("td", {}, when(l.created_at)), h("td", {}, names.get(l.channel_id) || `channel ${l.channel_id}`),
      h("td", {}, answerList(fields.get(l.channel_id), l.answers)),
      h("td", {}, openButton(l, more)), h("td", { class: "actions" }, can("delete") ? del : null)), more];
  }

  // openButton shows and hides the lead's row of details, loaded from
  // GET /api/leads/{id} the first time: its mode, and a live chat's agent,
  // a link to its conversation and the transcript.
  function openButton(l, more) {
    const b = h("button", { type: "button", "aria-expanded": "false", "aria-controls": more.id }, `Open lead ${l.id}`);
    b.addEventListener("click", async () => {
      const open = more.hidden;
      more.hidden = !open;
      b.setAttribute("aria-expanded", String(open));
      b.textContent = `${open ? "Close" : "Open"} lead ${l.id}`;
      if (!open || more.dataset.loaded) return;
      more.dataset.loaded = "1";
      const cell = more.firstChild;
      try {
        const full = await api("GET", `/api/leads/${l.id}`);
        const conv = full.session_id ? [h("a", { href: `#/conversations/${full.session_id}` }, "Open the conversation"), " ", h("code", {}, full.session_id)] : "—";
        cell.append(h("dl", { class: "facts" }, [["Mode", full.mode === "live_chat" ? "Live chat" : "Lead capture"],
          ["Agent", full.agent_id ? agents.get(full.agent_id) || `agent ${full.agent_id}` : "—"], ["Conversation", conv]]
          .map(([k, x]) => [h("dt", {}, k), h("dd", {}, x)])));
        if (full.session) cell.append(transcript(full.session.transcript.map((t) => ({ kind: "line", role: t.role, text: t.text }))));
      } catch (e) {
        cell.append(h("p", { class: "form-error", role: "alert" }, e.message));
      }
    });
    return b;
  }
}

hooks.signedOut = signedOut;
hooks.signedIn = signedIn;
hooks.opened = opened;
hooks.render = render;
render(true);
watchFeatures(() => render());
