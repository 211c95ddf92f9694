// @ts-check
// The pages of a visitor who is not signed in, or arrives by a link: sign
// in, "Forgot password?", a reset link's page and an invitation's page
// (accept signed in as the invited email's account, or create it).

import { acceptInvite, authMethods, forgotPassword, inviteDetails, login, resetPassword } from "../api.js";
import { h, notice, errorText, when } from "../dom.js";
import { form } from "../forms.js";
import { me, opened, render, signIn, signedOut, takeSignInNote } from "../router.js";

/** @import {PageContext} from "../router.js" */
/** @import {Role} from "../types.js" */

/** article is a or an, before a role. @param {Role} role */
export const article = (role) => (/^[aeiou]/.test(role) ? "an" : "a");

/** signInPage is the page of a visitor who is not signed in. @param {PageContext} ctx */
export function signInPage({ show }) {
  const note = takeSignInNote();
  const f = form([
    { name: "email", label: "Email", type: "email", autocomplete: "username", required: true },
    { name: "password", label: "Password", type: "password", autocomplete: "current-password", required: true },
  ], "Sign in", async (v) => {
    const session = await login(v);
    signIn(session.token);
    if (!location.hash || location.hash === "#/") location.hash = "#/agents";
    render(true);
  });
  const forgot = h("div", {});
  const sso = h("div", {});
  show("Sign in to agentline", note.message ? notice(note.message) : null, sso, h("div", { class: "card signin" }, f), forgot);
  authMethods().then((m) => {
    if (m.password_reset_by_email) forgot.replaceChildren(forgotCard());
    // A full navigation: the provider's pages, then the callback, which
    // comes back to #/signed-in/ with the session.
    if (m.sso) sso.replaceChildren(h("div", { class: "card signin" }, h("a", { class: "button", href: m.sso.url }, `Sign in with ${m.sso.name}`)));
  }, () => {});
  const email = /** @type {HTMLInputElement} */ (f.querySelector("input"));
  email.value = note.email;
  (email.value ? /** @type {HTMLInputElement} */ (f.querySelector("input[type=password]")) : email).focus();
}

/**
 * forgotCard asks for a reset link by email (only offered when this
 * agentline sends mail); the answer is the same for every address.
 */
function forgotCard() {
  const status = h("p", { role: "status" });
  const f = form([{ name: "email", label: "Your account's email", type: "email", autocomplete: "username", required: true }],
    "Email me a reset link", async (v) => {
      const r = await forgotPassword(v);
      status.textContent = r.message;
    });
  return h("details", { class: "card signin" }, h("summary", {}, "Forgot password?"), f, status);
}

/** resetPage is where a reset link leads: choose a new password. @param {PageContext} ctx @param {string} token */
export function resetPage({ show }, token) {
  const f = form([
    { name: "password", label: "New password", type: "password", autocomplete: "new-password", required: true, hint: "At least 8 characters. Setting it signs you out everywhere." },
  ], "Set password", async (v) => {
    const done = await resetPassword({ token, password: v.password });
    signedOut(done.message, done.email);
  });
  show("Set a new password", h("div", { class: "card signin" }, f));
}

/**
 * signInCard signs in and then runs after(); email, when given, is fixed.
 * @param {string} email @param {() => Promise<void>} after @param {string} [submitLabel]
 */
function signInCard(email, after, submitLabel = "Sign in") {
  const f = form([
    { name: "email", label: "Email", type: "email", autocomplete: "username", required: true },
    { name: "password", label: "Password", type: "password", autocomplete: "current-password", required: true },
  ], submitLabel, async (v) => {
    const session = await login(v);
    signIn(session.token);
    await after();
  });
  if (email) {
    const input = /** @type {HTMLInputElement} */ (f.querySelector("input[type=email]"));
    input.value = email;
    input.readOnly = true;
  }
  return f;
}

/**
 * invitePage is where an invitation leads: who invites whom to what, then
 * accept signed in as the invited email's account, or create it.
 * @param {PageContext} ctx @param {string} token
 */
export async function invitePage({ show }, token) {
  let d;
  try {
    d = await inviteDetails(token);
  } catch (e) {
    return show("Invitation", notice(errorText(e), "error"));
  }
  const { project_id: pid, project_name: name, role } = d;
  const offer = h("p", {}, h("b", {}, d.invited_by), " invited ", h("b", {}, d.email), " to join the project ",
    h("b", {}, name), ` as ${article(role)} `, h("b", {}, role), `. The invitation works once, until ${when(d.expires_at)}.`);
  const join = async () => {
    await acceptInvite({ token });
    takeSignInNote();
    opened(`You are now ${article(role)} ${role} of ${name}.`, pid);
  };
  const signedInAs = me();
  if (signedInAs) {
    if (signedInAs.user.email.toLowerCase() !== d.email.toLowerCase()) {
      return show("Invitation to " + name, offer, notice(
        `You are signed in as ${signedInAs.user.email}, but this invitation is for ${d.email}. Sign out, then open the link again to accept it as ${d.email}.`, "error"));
    }
    return show("Invitation to " + name, offer, h("div", { class: "card signin" }, form([], "Accept invitation", join)));
  }
  const fresh = form([
    { name: "password", label: "Choose a password", type: "password", autocomplete: "new-password", required: true, hint: "At least 8 characters." },
  ], "Create account and join", async (v) => {
    const answer = await acceptInvite({ token, password: v.password });
    box.replaceChildren(notice(answer.message), signInCard(d.email, () => join().catch(() => opened("", pid)), "Sign in and open the project"));
  });
  const email = d.email;
  const box = h("div", {}, h("div", { class: "card signin" }, h("h2", {}, `I have an account as ${email}`), signInCard(email, join, "Sign in and accept")),
    h("div", { class: "card signin" }, h("h2", {}, "I am new to agentline"), fresh));
  show("Invitation to " + name, offer, box);
}

/**
 * signedInPage keeps the session single sign-on handed over in the
 * location's fragment, and replaces itself in the history so the token
 * does not stay there. @param {PageContext} _ctx @param {string} token
 */
export function signedInPage(_ctx, token) {
  signIn(token);
  location.replace("#/agents"); // its hashchange renders
}
