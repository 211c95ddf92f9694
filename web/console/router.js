// @ts-check
// The router owns the console's state: who is signed in, their projects
// and the current one, and the page the location hash names (#/agents/3).
// render() draws the page of the current hash; pages read the state through
// the functions below and draw again with render(). Nothing else keeps
// state that outlives a page, except the secrets shown once (secrets.js).

import { getMe, listProjects, logout, sessionToken, setSessionToken, whenSignedOut } from "./api.js";
import { h, flat, notice, main, errorText } from "./dom.js";

/** @import {Me, Project, Features} from "./types.js" */
/** @import {Child} from "./dom.js" */

/**
 * @typedef {object} PageContext What a page draws with.
 * @property {(title: string, ...nodes: Child[]) => boolean} show puts the
 *   page on screen, titled; false when the user has moved on meanwhile
 * @property {() => boolean} live whether the page is still the current one
 * @property {(ms: number, fn: () => unknown) => void} every runs fn every ms
 *   (counted from the end of its last run) while the page is the current
 *   one and the tab is visible; the router stops it when the page is left
 *   or drawn again, so no page keeps a timer of its own
 */
/** @typedef {(ctx: PageContext, ...params: string[]) => unknown} Page */
/** @typedef {[RegExp, string, Page]} Route a hash pattern, its navigation section and its page */

/**
 * @typedef {object} Setup The console's pages and frame, given to start().
 * @property {Route[]} routes the pages of a signed-in user
 * @property {Route[]} links the pages of invitation and reset links, which work signed out too
 * @property {Page} signIn the page of a signed-out visitor
 * @property {(section: string) => void} header draws the frame's header for the section
 * @property {() => Promise<void>} banners draws the frame's banners
 * @property {() => void} signingOut runs as the session ends (to forget the secrets on screen)
 */

const PROJECT = "agentline.project";

/** @type {Setup} */
let setup;
/** @type {Me | null} */
let signedIn = null;
/** @type {Project[]} */
let all = [];
/** @type {Project | null} */
let current = null;
let section = "";
let renderGen = 0;
/** @type {(() => void)[]} */
let leaving = [];
let openedMessage = "";
let signInNote = { message: "", email: "" };

/** me is who is signed in, or null. */
export function me() {
  return signedIn;
}

/** user is who is signed in; pages of a signed-in user only ask. */
export function user() {
  if (!signedIn) throw new Error("Nobody is signed in.");
  return signedIn;
}

/** features are what the deployment offers (getMe). @returns {Features} */
export function features() {
  return user().features;
}

/** updateMe takes a newer answer of getMe. @param {Me} m */
export function updateMe(m) {
  signedIn = m;
}

/** projects are the signed-in user's projects. */
export function projects() {
  return all;
}

/** project is the current project, or null when the user has none. */
export function maybeProject() {
  return current;
}

/** project is the current project; the router opens pages that need one only when there is one. */
export function project() {
  if (!current) throw new Error("No project is open.");
  return current;
}

/** setProject makes the project of id current (or the first one). @param {number} id */
export function setProject(id) {
  current = all.find((p) => p.id === id) || all[0] || null;
  if (current) sessionStorage.setItem(PROJECT, String(current.id));
}

/** forgetProject drops the current project (deleted). */
export function forgetProject() {
  sessionStorage.removeItem(PROJECT);
  current = null;
}

/** loadProjects reads the user's projects again, keeping the current one. */
export async function loadProjects() {
  all = await listProjects();
  setProject(Number(sessionStorage.getItem(PROJECT)));
}

/**
 * can tells whether the signed-in user's role in the current project
 * allows what: "create" (creating, changing, testing: editors and owners)
 * or "delete" (deleting, revoking, ending calls: owners). The console shows
 * only the controls a role can use; the API decides anyway.
 * @param {"create" | "delete"} what
 */
export function can(what) {
  const role = current && current.role;
  return what === "delete" ? role === "owner" : role === "owner" || role === "editor";
}

/** onLeave runs fn once, when the page is drawn again or another one is. @param {() => void} fn */
export function onLeave(fn) {
  leaving.push(fn);
}

/** refreshFrame draws the frame's header again (the projects changed). */
export function refreshFrame() {
  setup.header(section);
}

/** takeSignInNote is what the sign-in page says and fills in, once. */
export function takeSignInNote() {
  const note = signInNote;
  signInNote = { message: "", email: "" };
  return note;
}

/**
 * render shows the page of the current hash. Each render has a number;
 * a page whose data arrives after the user moved on is dropped.
 * @param {boolean} [focus] move the focus and the scroll to the new page
 */
export async function render(focus = false) {
  const gen = ++renderGen;
  for (const fn of leaving.splice(0)) fn();
  const box = main();
  // The page being left stays, dimmed, until the next one has its data.
  box.setAttribute("aria-busy", "true");
  /** @type {PageContext["show"]} */
  const show = (title, ...nodes) => {
    if (gen !== renderGen) return false;
    box.removeAttribute("aria-busy");
    document.title = title + " · agentline";
    const said = openedMessage ? notice(openedMessage) : null;
    openedMessage = "";
    box.replaceChildren(h("h1", {}, title), ...flat([said, ...nodes]));
    if (focus) {
      // A new page starts at its top, with the focus on it for screen
      // readers and the keyboard's next Tab.
      box.focus({ preventScroll: true });
      scrollTo(0, 0);
    }
    focus = false;
    return true;
  };
  /** @type {PageContext["every"]} */
  const every = (ms, fn) => {
    if (gen !== renderGen) return;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const tick = async () => {
      try {
        if (!document.hidden) await fn();
      } catch {
        // The page shows its own errors; the timer goes on.
      }
      if (gen === renderGen) timer = setTimeout(tick, ms);
    };
    timer = setTimeout(tick, ms);
    leaving.push(() => clearTimeout(timer));
  };
  const ctx = { show, live: () => gen === renderGen, every };
  try {
    await route(ctx);
  } catch (err) {
    if (!sessionToken()) return;
    show("Something went wrong", notice(errorText(err), "error"));
  }
}

/** route finds the page of the hash and draws it. @param {PageContext} ctx */
async function route(ctx) {
  // Invitation and reset links' pages are public: they work signed out;
  // an invitation also knows who is signed in.
  const link = matchRoute(setup.links, location.hash);
  if (link) {
    if (sessionToken() && !signedIn) {
      signedIn = await getMe().catch(() => null);
      if (signedIn) await loadProjects();
    }
    drawFrame("");
    return link.route[2](ctx, ...link.params);
  }
  if (!sessionToken()) {
    drawFrame("");
    document.getElementById("banners")?.replaceChildren();
    return setup.signIn(ctx);
  }
  if (!signedIn) {
    signedIn = await getMe();
    await loadProjects();
  }
  let hash = location.hash;
  // The sessions and calls lists became the conversations list.
  if (hash === "#/sessions" || hash === "#/calls") return location.replace("#/conversations");
  if (!current && !["#/projects", "#/account", "#/admin"].includes(hash)) hash = "#/projects";
  const found = matchRoute(setup.routes, hash);
  if (!found) return location.replace("#/agents");
  drawFrame(found.route[1]);
  setup.banners().catch(() => {});
  await found.route[2](ctx, ...found.params);
}

/** @param {Route[]} routes @param {string} hash */
function matchRoute(routes, hash) {
  for (const route of routes) {
    const m = hash.match(route[0]);
    if (m) return { route, params: m.slice(1) };
  }
  return null;
}

/** @param {string} s */
function drawFrame(s) {
  section = s;
  setup.header(s);
}

/** signedOut ends the session on this side and shows the sign-in page. @param {string} message @param {string} [email] */
export function signedOut(message, email) {
  setup.signingOut();
  setSessionToken(null);
  signedIn = null;
  signInNote = { message, email: email || "" };
  if (setup.links.some(([re]) => re.test(location.hash))) {
    location.replace("#/agents"); // its hashchange renders
    return;
  }
  render(true);
}

/** signIn keeps a new session's token; the next render loads who it is. @param {string} token */
export function signIn(token) {
  setSessionToken(token);
  signedIn = null;
}

/** opened goes to a project just joined, saying message there. @param {string} message @param {number} projectID */
export async function opened(message, projectID) {
  signedIn = await getMe();
  await loadProjects();
  setProject(projectID);
  openedMessage = message;
  location.replace("#/agents"); // its hashchange renders
}

/** signOut ends the session on the server too. */
export async function signOut() {
  try {
    await logout();
  } catch {
    // The token is dropped either way.
  }
  signedOut("You are signed out.");
}

/** start draws the first page and follows the hash from then on. @param {Setup} s */
export function start(s) {
  setup = s;
  whenSignedOut((message) => signedOut(message));
  window.addEventListener("hashchange", () => render(true));
  render(true);
}
