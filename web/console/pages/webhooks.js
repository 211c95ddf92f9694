// @ts-check
// The project's event webhooks (endpoints and their deliveries;
// docs/webhooks.md), and a form channel's notify URL deliveries, shown the
// same way.

import {
  OPENAPI_URL, createWebhook, deleteWebhook, getCatalog, getDelivery, getWebhook, listDeliveries, listNotifyAttempts, listWebhooks,
  retryDelivery, rotateWebhookSecret, sendTestEvent, updateWebhook,
} from "../api.js";
import { h, table, notice, confirmAction, copyButton, when, plural, alertError, errorText } from "../dom.js";
import { form } from "../forms.js";
import { can, project, render } from "../router.js";
import { dismissButton, forget, keep, shown } from "../secrets.js";

/** @import {PageContext} from "../router.js" */
/** @import {FieldSpec} from "../forms.js" */
/** @import {Channel, Delivery, NotifyAttempt, WebhookAttempt, WebhookEndpoint} from "../types.js" */

/** slot is where a secret just made (creation, rotation) stays on screen until dismissed. @param {number} id */
const slot = (id) => `webhook:${id}`;

/** @type {Record<string, string>} the status pill's class of a delivery's status */
const pill = { delivered: "live", failed: "bad" };

/**
 * health says how an endpoint is doing, in words and a status pill: off by
 * a person, disabled by agentline (and why), failing, or fine.
 * @param {WebhookEndpoint} w
 */
function health(w) {
  if (!w.enabled && w.disabled_reason) return h("span", { class: "status bad" }, "Disabled by agentline");
  if (!w.enabled) return h("span", { class: "status" }, "Disabled");
  if (w.failing_since) return h("span", { class: "status warn" }, "Failing since " + when(w.failing_since));
  return h("span", { class: "status live" }, "Enabled");
}

/** @param {WebhookEndpoint} w */
function events(w) {
  return w.events.includes("*") ? "All events" : w.events.join(", ");
}

/**
 * endpointFields are an endpoint's fields; the event types come from the
 * server's catalog (getCatalog).
 * @param {WebhookEndpoint | null} w @param {string[]} eventTypes @returns {FieldSpec[]}
 */
function endpointFields(w, eventTypes) {
  return [
    { name: "url", label: "URL", type: "url", value: w ? w.url : "", required: true, placeholder: "https://example.com/agentline/webhooks",
      hint: "Where agentline posts each event, signed (Standard Webhooks). HTTPS." },
    { name: "events", label: "Events", type: "lines", rows: 3, value: w ? w.events : ["*"],
      hint: "One event type per line, or * for all: " + eventTypes.join(", ") + "." },
    { name: "description", label: "Description", value: w ? w.description : "", placeholder: "CRM sync" },
  ];
}

/** @param {PageContext} ctx */
export async function webhooksPage({ show }) {
  const pid = project().id;
  const [{ webhooks }, cat] = await Promise.all([listWebhooks(pid), getCatalog()]);
  const rows = webhooks.map((w) => h("tr", {},
    h("td", {}, h("a", { href: `#/webhooks/${w.id}` }, w.url), w.description ? h("div", { class: "muted" }, w.description) : null),
    h("td", {}, events(w)), h("td", {}, health(w), w.disabled_reason ? h("div", { class: "muted" }, w.disabled_reason) : null)));
  show("Webhooks",
    h("p", { class: "muted" }, "Your systems get the project's events (conversations, leads, calls, numbers) as signed HTTP posts, retried for up to 3 days. ",
      h("a", { href: OPENAPI_URL }, "Event schemas"), "."),
    table(["Endpoint", "Events", "State"], rows, "No webhook endpoints yet."),
    can("create") ? h("div", { class: "card" }, h("h2", {}, "New endpoint"), form(endpointFields(null, cat.event_types), "Add endpoint", async (v) => {
      const w = await createWebhook(pid, v);
      keep(slot(w.id), w.secret);
      location.hash = `#/webhooks/${w.id}`;
    }, { label: "New endpoint" })) : null);
}

/** @param {PageContext} ctx @param {string} id */
export async function webhookPage(ctx, id) {
  const [w, cat] = await Promise.all([getWebhook(id), getCatalog()]);
  const whole = shown(slot(w.id));
  const saved = h("p", { role: "status", class: "muted" });
  const settings = form([...endpointFields(w, cat.event_types), { name: "enabled", label: "Enabled", type: "checkbox", value: w.enabled,
    hint: "Enabling it again clears why agentline disabled it; events while it was off were not kept for it." }], "Save endpoint", async (v) => {
    await updateWebhook(id, v);
    saved.textContent = "Saved.";
    render();
  }, { label: "Endpoint settings", extra: saved, need: "create" });
  const del = h("button", { type: "button", class: "danger" }, "Delete endpoint");
  del.addEventListener("click", async () => {
    if (!(await confirmAction("Delete this endpoint? Its deliveries are deleted with it and no more events are sent to it.", "Delete endpoint"))) return;
    await deleteWebhook(id).catch((e) => alertError(e));
    forget(slot(w.id));
    location.hash = "#/webhooks";
  });
  ctx.show(w.description || "Webhook endpoint", h("p", {}, h("code", {}, w.url), " ", health(w)), stateNotice(w),
    secretCard(w, whole), h("div", { class: "card" }, h("h2", {}, "Settings"), settings),
    await deliveriesCard(ctx, w), can("delete") ? h("div", { class: "card" }, h("h2", {}, "Danger zone"), del) : null);
}

/**
 * stateNotice explains an endpoint agentline disabled (the receiver
 * answered 410 Gone, or failed for the whole retry span) or one failing now.
 * @param {WebhookEndpoint} w
 */
function stateNotice(w) {
  if (!w.enabled && w.disabled_reason) {
    return notice(`agentline disabled this endpoint: ${w.disabled_reason}` + (w.failing_since ? `; failing since ${when(w.failing_since)}` : "") +
      ". Fix the receiver, then enable it again below.", "error");
  }
  if (w.enabled && w.failing_since) return notice(`Deliveries have been failing since ${when(w.failing_since)}; they are retried. After 3 days of failures the endpoint is disabled.`, "error");
  return null;
}

/** @param {WebhookEndpoint} w @param {string | undefined} whole */
function secretCard(w, whole) {
  const box = h("div", { class: "card", id: "secret" }, h("h2", {}, "Signing secret"));
  if (whole) {
    const code = h("code", { class: "key", id: "whole-secret" }, whole);
    box.append(notice("This is the whole signing secret. It is shown only now, until you dismiss it: copy it into your receiver's settings.", "ok"),
      h("p", {}, code), h("div", { class: "row" }, copyButton(() => whole, code, "Copy secret"), dismissButton(slot(w.id))));
  } else {
    box.append(h("p", { class: "muted" }, "The secret was shown once, when it was made. Rotate it to get a new one."));
  }
  if (w.previous_secret_until) box.append(h("p", { class: "muted" }, `The previous secret also signs until ${when(w.previous_secret_until)}.`));
  const rotate = h("button", { type: "button" }, "Rotate secret");
  rotate.addEventListener("click", async () => {
    if (!(await confirmAction("Make a new signing secret? For 24 hours deliveries are signed with both the old and the new one.", "Rotate secret"))) return;
    try {
      const made = await rotateWebhookSecret(w.id);
      keep(slot(w.id), made.secret);
      render();
    } catch (e) {
      alertError(e);
    }
  });
  if (can("create")) box.append(h("div", { class: "row" }, rotate));
  return box;
}

/**
 * deliveriesCard lists the endpoint's latest deliveries; each opens to
 * its attempts, and a finished one can be sent again.
 * @param {PageContext} ctx @param {WebhookEndpoint} w
 */
async function deliveriesCard(ctx, w) {
  const { deliveries } = await listDeliveries(w.id);
  const status = h("p", { role: "status", class: "muted" });
  /** act runs an action of the card, then (1.5 s later) draws the page again. @param {() => Promise<unknown>} run @param {string} done */
  const act = async (run, done) => {
    try {
      await run();
      status.textContent = done;
      setTimeout(() => ctx.live() && render(), 1500);
    } catch (e) {
      status.textContent = errorText(e);
    }
  };
  const test = h("button", { type: "button" }, "Send test event");
  test.addEventListener("click", () => act(() => sendTestEvent(w.id), "Test event queued."));
  const refresh = h("button", { type: "button", onclick: () => render() }, "Refresh");
  const rows = deliveries.map((d) => {
    const retry = d.status === "pending" || !can("create") ? null
      : h("button", { type: "button", onclick: () => act(() => retryDelivery(w.id, d.id), `Delivery ${d.id} queued again.`) }, "Retry");
    return h("tr", { "data-delivery": d.id }, h("td", {}, d.event_type, h("div", { class: "muted" }, h("code", {}, d.event_id))),
      h("td", {}, h("span", { class: "status " + (pill[d.status] || "") }, d.status),
        d.last_status_code ? ` (${d.last_status_code})` : ""),
      h("td", {}, attemptsOf(w, d)), h("td", {}, when(d.created_at)), h("td", { class: "actions" }, retry));
  });
  return h("div", { class: "card", id: "deliveries" }, h("h2", {}, "Deliveries"), h("div", { class: "row" }, can("create") ? test : null, refresh), status,
    table(["Event", "Status", "Attempts", "Created", ""], rows, "No deliveries yet. Send a test event to try the endpoint."));
}

/** attemptsOf is a delivery's attempts, loaded when opened. @param {WebhookEndpoint} w @param {Delivery} d */
function attemptsOf(w, d) {
  const attempts = h("div", {});
  const open = h("details", {}, h("summary", {}, plural(d.attempt_count, "attempt")), attempts);
  open.addEventListener("toggle", async () => {
    if (!open.open || attempts.childElementCount) return;
    try {
      const full = await getDelivery(w.id, d.id);
      attempts.append(attemptList(full.attempts || []));
    } catch (e) {
      attempts.append(notice(errorText(e), "error"));
    }
  });
  return open;
}

/** @param {(WebhookAttempt | NotifyAttempt)[]} list */
function attemptList(list) {
  if (!list.length) return h("p", { class: "muted" }, "Not attempted yet.");
  return h("ol", { class: "attempts" }, list.map((a) => h("li", {},
    h("b", {}, a.status_code ? `HTTP ${a.status_code}` : "No answer"), ` at ${when(a.at)}, ${a.latency_ms} ms`,
    a.error ? h("div", { class: "field-error" }, a.error) : null,
    "response" in a && a.response ? h("pre", { class: "response" }, a.response) : null)));
}

/**
 * notifyCard lists a form channel's latest notify_url deliveries, one row
 * per lead, like an endpoint's deliveries: delivered, retrying or failed,
 * the last answer's status, and each attempt when opened.
 * @param {Channel} c
 */
export async function notifyCard(c) {
  const { attempts } = await listNotifyAttempts(c.id);
  /** @type {Map<number, NotifyAttempt[]>} */
  const byLead = new Map();
  for (const a of attempts) {
    const list = byLead.get(a.lead_id);
    if (list) list.push(a);
    else byLead.set(a.lead_id, [a]);
  }
  const outcome = (/** @type {NotifyAttempt} */ last) => (last.delivered ? "delivered" : last.attempt >= last.max_attempts ? "failed" : "retrying");
  const rows = [...byLead].map(([lead, list]) => {
    const last = list[0], st = outcome(last);
    return h("tr", { "data-lead": lead }, h("td", {}, `Lead ${lead}`),
      h("td", {}, h("span", { class: "status " + (pill[st] || "warn") }, st), last.status_code ? ` (${last.status_code})` : ""),
      h("td", {}, h("details", {}, h("summary", {}, plural(list.length, "attempt")), attemptList([...list].reverse()))),
      h("td", {}, when(last.at)));
  });
  const failed = [...byLead.values()].filter((list) => outcome(list[0]) === "failed").length;
  const notifyURL = c.settings.form?.notify_url;
  const hint = notifyURL ? "Each lead is posted to the notify URL, retried a few times over about three minutes."
    : "This form has no notify URL now; these are earlier deliveries.";
  if (!rows.length && !notifyURL) return null;
  return h("div", { class: "card", id: "notify-deliveries" }, h("h2", {}, "Notify URL deliveries"),
    failed ? notice(`${plural(failed, "lead")} could not be delivered to the notify URL. They are stored: see Leads.`, "error") : null,
    h("p", { class: "muted" }, hint, " ", h("button", { type: "button", onclick: () => render() }, "Refresh")),
    table(["Lead", "Status", "Attempts", "Last try"], rows, "No deliveries yet."));
}
