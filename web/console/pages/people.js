// @ts-check
// People: a project's members and invitations, the signed-in user's own
// account, and the instance administrators' accounts page. An account
// belongs to its holder and to the instance's administrators: nothing here
// lets a project's owner reach another person's password.

import {
  changePassword, createInvite, listInvites, listMembers, listUsers, makeResetLink, removeMember, updateMember, updateUser, withdrawInvite,
} from "../api.js";
import { h, table, confirmAction, copyButton, when, alertError, errorText } from "../dom.js";
import { form } from "../forms.js";
import { features, project, render, user } from "../router.js";
import { keep, shownBox } from "../secrets.js";
import { article } from "./auth.js";

/** @import {PageContext} from "../router.js" */
/** @import {Member, Invite, User, Role} from "../types.js" */

/** @type {[Role, string][]} */
const roles = [["owner", "Owner"], ["editor", "Editor"], ["viewer", "Viewer"]];

/**
 * keepShown keeps a link made just now on screen until it is dismissed,
 * even if the page renders again (a secret shown only once must not
 * vanish before it is copied). Each project's invitations have their own slot.
 * @param {string} slot @param {Node} node
 */
function keepShown(slot, node) {
  keep(slot, node);
  render();
}

/** linkBox shows a link whole, once, with a Copy button. @param {string} what @param {{email: string, expires_at: string, url?: string}} link */
function linkBox(what, link) {
  const url = location.origin + link.url;
  const code = h("code", { class: "secret", id: "invite-link" }, url);
  return h("div", {},
    h("p", {}, `${what} for ${link.email} (works once, until ${when(link.expires_at)}). It is shown only now: copy it and hand it to them.`),
    h("p", {}, code, " ", copyButton(() => url, code, "Copy link")));
}

/** @param {PageContext} ctx */
export async function membersPage({ show }) {
  const p = project(), pid = p.id, owner = p.role === "owner";
  const members = await listMembers(pid);
  const rows = members.map((m) => (owner ? memberRow(pid, m) : h("tr", {}, h("td", {}, m.email), h("td", {}, m.role))));
  show("Members of " + p.name,
    h("p", { class: "muted" }, owner
      ? "Owners invite people, change roles and may delete; editors create and change; viewers only read."
      : `You are ${p.role ? article(p.role) : "a"} ${p.role} here: only owners invite people and change roles.`),
    table(owner ? ["Email", "Role", ""] : ["Email", "Role"], rows, "No members."),
    owner ? await invitesCard(pid) : null);
}

/** memberRow is a member as its project's owners see it: role to change, Remove. @param {number} pid @param {Member} m */
function memberRow(pid, m) {
  const role = h("select", { "aria-label": "Role of " + m.email }, roles.map(([v, l]) => h("option", { value: v }, l)));
  role.value = m.role;
  const err = h("span", { class: "field-error", role: "alert" });
  role.addEventListener("change", async () => {
    try {
      await updateMember(pid, m.user_id, { role: role.value });
      render();
    } catch (e) {
      err.textContent = errorText(e);
      role.value = m.role;
    }
  });
  const remove = h("button", { type: "button", class: "danger" }, "Remove");
  remove.addEventListener("click", async () => {
    if (!(await confirmAction(`Remove ${m.email} from ${project().name}?`, "Remove"))) return;
    await removeMember(pid, m.user_id).then(() => render(), (e) => { err.textContent = errorText(e); });
  });
  return h("tr", {}, h("td", {}, m.email), h("td", {}, role, err), h("td", { class: "actions" }, remove));
}

/**
 * invitesCard lets an owner invite by email with a role, and see and
 * withdraw the invitations not accepted yet.
 * @param {number} pid
 */
async function invitesCard(pid) {
  const mail = features().mail_enabled;
  const pending = await listInvites(pid);
  const rows = pending.map((/** @type {Invite} */ i) => {
    const withdraw = h("button", { type: "button", class: "danger" }, "Withdraw");
    withdraw.addEventListener("click", async () => {
      if (!(await confirmAction(`Withdraw the invitation for ${i.email}?`, "Withdraw"))) return;
      await withdrawInvite(i.id).catch(alertError);
      render();
    });
    return h("tr", {}, h("td", {}, i.email), h("td", {}, i.role), h("td", {}, when(i.expires_at)), h("td", { class: "actions" }, withdraw));
  });
  return h("div", { class: "card" }, h("h2", {}, "Invite people"),
    h("p", { class: "muted" }, mail
      ? "The invitation is emailed to the address you give, and only there. They join when they accept it."
      : "This agentline sends no email: you get the invitation's link once, to hand over yourself. They join when they accept it."),
    form([
      { name: "email", label: "Email to invite", type: "email", required: true },
      { name: "role", label: "Role", type: "select", options: roles, value: "editor" },
    ], "Invite", async (v) => {
      const inv = await createInvite(pid, v);
      keepShown(`invite:${pid}`, inv.delivery === "email"
        ? h("p", {}, `Invitation emailed to ${inv.email}.`)
        : linkBox("An invitation link", inv));
    }, { label: "Invite" }),
    shownBox(`invite:${pid}`),
    h("h3", {}, "Invitations not accepted yet"),
    table(["Email", "Role", "Expires", ""], rows, "No invitations waiting."),
    h("p", { class: "muted" }, "Forgotten passwords are not a project's business: their holder resets theirs with \"Forgot password?\" when this agentline sends email, or an instance administrator makes them a reset link."));
}

/** accountPage changes the signed-in user's password. @param {PageContext} ctx */
export function accountPage({ show }) {
  const done = h("p", { role: "status" });
  show("Your account", h("p", { class: "muted" }, "Signed in as ", h("b", {}, user().user.email), "."),
    h("div", { class: "card" }, h("h2", {}, "Change password"), form([
      { name: "current_password", label: "Current password", type: "password", autocomplete: "current-password", required: true },
      { name: "new_password", label: "New password", type: "password", autocomplete: "new-password", required: true, hint: "At least 8 characters." },
    ], "Change password", async (v, f) => {
      done.textContent = "";
      await changePassword(v);
      f.reset();
      done.textContent = "Password changed. Your other sessions are signed out.";
    }), done));
}

/**
 * adminPage lists every account of the instance for its administrators:
 * disable or enable, make or unmake administrator, make a reset link.
 * @param {PageContext} ctx
 */
export async function adminPage({ show }) {
  const users = await listUsers();
  const mail = features().mail_enabled;
  show("Accounts",
    h("p", { class: "muted" }, "Instance administrators manage accounts; they need no role in a project to do it, and get none. ",
      mail ? "Reset links are emailed to the account's own address." : "This agentline sends no email: a reset link is shown here once, to hand over.",
      " Sign-ins and these changes are in the ", h("a", { href: "#/admin/audit" }, "instance audit log"), "."),
    shownBox("reset-link"),
    table(["Email", "Kind", "Status", "Created", ""], users.map(userRow), "No accounts."));
}

/** @param {string} label @param {string} cls @param {() => Promise<void>} run */
function act(label, cls, run) {
  const b = h("button", { type: "button", class: cls }, label);
  b.addEventListener("click", () => run().catch(alertError));
  return b;
}

/** userRow is an account with what an administrator does to it. @param {User} u */
function userRow(u) {
  const patch = (/** @type {{admin?: boolean, disabled?: boolean}} */ body) => updateUser(u.id, body).then(() => render());
  return h("tr", {},
    h("td", {}, u.email), h("td", {}, u.admin ? "administrator" : "user"), h("td", {}, u.disabled ? "disabled" : "active"),
    h("td", {}, when(u.created_at)),
    h("td", { class: "actions" },
      act(u.admin ? "Unmake admin" : "Make admin", "", () => patch({ admin: !u.admin })),
      act(u.disabled ? "Enable" : "Disable", u.disabled ? "" : "danger", async () => {
        if (!u.disabled && !(await confirmAction(`Disable ${u.email}? Their sessions end and they cannot sign in.`, "Disable"))) return;
        await patch({ disabled: !u.disabled });
      }),
      act("Reset link", "", async () => {
        const link = await makeResetLink(u.id);
        keepShown("reset-link", link.delivery === "email"
          ? h("p", {}, `A reset link was emailed to ${link.email}.`)
          : linkBox("A password reset link", link));
      })));
}
