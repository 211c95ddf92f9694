// agentline console: people. Members and invitations of a project, the
// pages that invitation and reset links lead to, "Forgot password?", and
// the instance administrators' accounts page. An account belongs to its
// holder and to the instance's administrators: nothing here lets a
// project's owner reach another person's password.

import { h, api, state, form, table, notice, confirmAction, copyButton, when, alertError, hooks, keep, shownBox } from "./ui.js";

const render = (focus) => hooks.render(focus);
const roles = [["owner", "Owner"], ["editor", "Editor"], ["viewer", "Viewer"]];
const article = (role) => (/^[aeiou]/.test(role) ? "an" : "a");

// A link made just now stays on screen until it is dismissed, even if the
// page renders again (ui.js keep: a secret shown only once must not vanish
// before it is copied). Each project's invitations have their own slot.
function keepShown(slot, node) {
  keep(slot, node);
  render();
}

// linkBox shows a link whole, once, with a Copy button.
function linkBox(what, link) {
  const url = location.origin + link.url;
  const code = h("code", { class: "secret", id: "invite-link" }, url);
  return h("div", {},
    h("p", {}, `${what} for ${link.email} (works once, until ${when(link.expires_at)}). It is shown only now: copy it and hand it to them.`),
    h("p", {}, code, " ", copyButton(() => url, code, "Copy link")));
}

export async function membersPage({ show }) {
  const pid = state.project.id;
  const owner = state.project.role === "owner";
  const members = await api("GET", `/api/projects/${pid}/members`);
  const rows = members.map((m) => {
    if (!owner) return h("tr", {}, h("td", {}, m.email), h("td", {}, m.role));
    const role = h("select", { "aria-label": "Role of " + m.email }, roles.map(([v, l]) => h("option", { value: v }, l)));
    role.value = m.role;
    const err = h("span", { class: "field-error", role: "alert" });
    role.addEventListener("change", async () => {
      try {
        await api("PATCH", `/api/projects/${pid}/members/${m.user_id}`, { role: role.value });
        render();
      } catch (e) {
        err.textContent = e.message;
        role.value = m.role;
      }
    });
    const remove = h("button", { type: "button", class: "danger" }, "Remove");
    remove.addEventListener("click", async () => {
      if (!(await confirmAction(`Remove ${m.email} from ${state.project.name}?`, "Remove"))) return;
      await api("DELETE", `/api/projects/${pid}/members/${m.user_id}`).then(() => render(), (e) => { err.textContent = e.message; });
    });
    return h("tr", {}, h("td", {}, m.email), h("td", {}, role, err), h("td", { class: "actions" }, remove));
  });
  show("Members of " + state.project.name,
    h("p", { class: "muted" }, owner
      ? "Owners invite people, change roles and may delete; editors create and change; viewers only read."
      : `You are ${article(state.project.role)} ${state.project.role} here: only owners invite people and change roles.`),
    table(owner ? ["Email", "Role", ""] : ["Email", "Role"], rows, "No members."),
    owner ? await invitesCard(pid) : null);
}

// invitesCard lets an owner invite by email with a role, and see and
// withdraw the invitations not accepted yet.
async function invitesCard(pid) {
  const mail = state.me.features.mail_enabled;
  const pending = await api("GET", `/api/projects/${pid}/invites`);
  const rows = pending.map((i) => {
    const withdraw = h("button", { type: "button", class: "danger" }, "Withdraw");
    withdraw.addEventListener("click", async () => {
      if (!(await confirmAction(`Withdraw the invitation for ${i.email}?`, "Withdraw"))) return;
      await api("DELETE", `/api/invites/${i.id}`).catch(alertError);
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
      const inv = await api("POST", `/api/projects/${pid}/invites`, v);
      keepShown(`invite:${pid}`, inv.delivery === "email"
        ? h("p", {}, `Invitation emailed to ${inv.email}.`)
        : linkBox("An invitation link", inv));
    }, { label: "Invite" }),
    shownBox(`invite:${pid}`),
    h("h3", {}, "Invitations not accepted yet"),
    table(["Email", "Role", "Expires", ""], rows, "No invitations waiting."),
    h("p", { class: "muted" }, "Forgotten passwords are not a project's business: their holder resets theirs with \"Forgot password?\" when this agentline sends email, or an instance administrator makes them a reset link."));
}

// signInCard signs in and then runs after(); email, when given, is fixed.
function signInCard(email, after, submitLabel = "Sign in") {
  const f = form([
    { name: "email", label: "Email", type: "email", autocomplete: "username", required: true },
    { name: "password", label: "Password", type: "password", autocomplete: "current-password", required: true },
  ], submitLabel, async (v) => {
    const login = await api("POST", "/api/auth/login", v);
    hooks.signedIn(login.token);
    await after();
  });
  if (email) {
    const input = f.querySelector("input[type=email]");
    input.value = email;
    input.readOnly = true;
  }
  return f;
}

// invitePage is where an invitation leads: who invites whom to what, then
// accept signed in as the invited email's account, or create it.
export async function invitePage({ show }, token) {
  let d;
  try {
    d = await api("POST", "/api/invites/details", { token });
  } catch (e) {
    return show("Invitation", notice(e.message, "error"));
  }
  const offer = h("p", {}, h("b", {}, d.invited_by), " invited ", h("b", {}, d.email), " to join the project ",
    h("b", {}, d.project_name), ` as ${article(d.role)} `, h("b", {}, d.role), `. The invitation works once, until ${when(d.expires_at)}.`);
  const join = async () => {
    await api("POST", "/api/invites/accept", { token });
    state.joinedProject = d.project_id;
    state.signOutMessage = "";
    hooks.opened(`You are now ${article(d.role)} ${d.role} of ${d.project_name}.`, d.project_id);
  };
  if (state.token && state.me) {
    if (state.me.user.email.toLowerCase() !== d.email.toLowerCase()) {
      return show("Invitation to " + d.project_name, offer, notice(
        `You are signed in as ${state.me.user.email}, but this invitation is for ${d.email}. Sign out, then open the link again to accept it as ${d.email}.`, "error"));
    }
    const accept = form([], "Accept invitation", join);
    return show("Invitation to " + d.project_name, offer, h("div", { class: "card signin" }, accept));
  }
  const fresh = form([
    { name: "password", label: "Choose a password", type: "password", autocomplete: "new-password", required: true, hint: "At least 8 characters." },
  ], "Create account and join", async (v) => {
    const answer = await api("POST", "/api/invites/accept", { token, password: v.password });
    box.replaceChildren(notice(answer.message), signInCard(d.email, () => join().catch(() => hooks.opened("", d.project_id)), "Sign in and open the project"));
  });
  const box = h("div", {}, h("div", { class: "card signin" }, h("h2", {}, `I have an account as ${d.email}`), signInCard(d.email, join, "Sign in and accept")),
    h("div", { class: "card signin" }, h("h2", {}, "I am new to agentline"), fresh));
  show("Invitation to " + d.project_name, offer, box);
}

// resetPage is where a reset link leads: choose a new password.
export function resetPage({ show }, token) {
  const f = form([
    { name: "password", label: "New password", type: "password", autocomplete: "new-password", required: true, hint: "At least 8 characters. Setting it signs you out everywhere." },
  ], "Set password", async (v) => {
    const done = await api("POST", "/api/auth/reset-password", { token, password: v.password });
    hooks.signedOut(done.message, done.email);
  });
  show("Set a new password", h("div", { class: "card signin" }, f));
}

// forgotCard asks for a reset link by email (only offered when this
// agentline sends mail); the answer is the same for every address.
export function forgotCard() {
  const status = h("p", { role: "status" });
  const f = form([{ name: "email", label: "Your account's email", type: "email", autocomplete: "username", required: true }],
    "Email me a reset link", async (v) => {
      const r = await api("POST", "/api/auth/forgot-password", v);
      status.textContent = r.message;
    });
  const details = h("details", { class: "card signin" }, h("summary", {}, "Forgot password?"), f, status);
  return details;
}

// adminPage lists every account of the instance for its administrators:
// disable or enable, make or unmake administrator, make a reset link.
export async function adminPage({ show }) {
  const users = await api("GET", "/api/admin/users");
  const mail = state.me.features.mail_enabled;
  const act = (label, cls, run) => {
    const b = h("button", { type: "button", class: cls }, label);
    b.addEventListener("click", () => run().catch(alertError));
    return b;
  };
  const patch = (u, body) => api("PATCH", `/api/admin/users/${u.id}`, body).then(() => render());
  const rows = users.map((u) => h("tr", {},
    h("td", {}, u.email), h("td", {}, u.admin ? "administrator" : "user"), h("td", {}, u.disabled ? "disabled" : "active"),
    h("td", {}, when(u.created_at)),
    h("td", { class: "actions" },
      act(u.admin ? "Unmake admin" : "Make admin", "", () => patch(u, { admin: !u.admin })),
      act(u.disabled ? "Enable" : "Disable", u.disabled ? "" : "danger", async () => {
        if (!u.disabled && !(await confirmAction(`Disable ${u.email}? Their sessions end and they cannot sign in.`, "Disable"))) return;
        await patch(u, { disabled: !u.disabled });
      }),
      act("Reset link", "", async () => {
        const link = await api("POST", `/api/admin/users/${u.id}/password-reset`);
        keepShown("reset-link", link.delivery === "email"
          ? h("p", {}, `A reset link was emailed to ${link.email}.`)
          : linkBox("A password reset link", link));
      }))));
  show("Accounts",
    h("p", { class: "muted" }, "Instance administrators manage accounts; they need no role in a project to do it, and get none. ",
      mail ? "Reset links are emailed to the account's own address." : "This agentline sends no email: a reset link is shown here once, to hand over."),
    shownBox("reset-link"),
    table(["Email", "Kind", "Status", "Created", ""], rows, "No accounts."));
}
