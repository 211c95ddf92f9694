// @ts-check
// The management API as the console calls it: one named function per
// endpoint, all on one request function. Requests carry the session token
// (Authorization: Bearer); JSON bodies are sent as JSON, FormData and Blobs as they are;
// an answer is its decoded JSON (null for 204), an error an APIError made
// of the body's {error: {code, message, field, fields}}. A 401 of a
// signed-in request (not the sign-in itself) ends the session: the
// console's handler set with whenSignedOut runs.
//
// The token lives in sessionStorage: it is gone when the tab closes and
// other tabs do not share it.

/**
 * @import {Me, Login, Message, Project, Member, Invite, InviteDetails, User, PasswordReset, Agent, AgentVersion, VersionPage, Catalog, Tool, MCPListing,
 *   KnowledgeDocument, KnowledgeSearch, Channel, WidgetKey, CreatedWidgetKey, Snippets, Lead, LeadDetail, LeadPage,
 *   FormSubmitAnswer, Conversation, ConversationPage, Analytics, Delivery, NotifyAttempt, WebhookEndpoint,
 *   WebhookEndpointWithSecret, PhoneNumber, AvailableNumber, OutboundCall, Call, TestCall, Campaign, CampaignPage, ContactPage,
 *   ContactUpload, DoNotCall, DoNotCallPage, ProviderAccount, TestScenario, TestRun, TestRunPage, APIKey, AuditPage} from "./types.js"
 */

const TOKEN = "agentline.token";
const LOGIN = "/api/auth/login";

let token = sessionStorage.getItem(TOKEN);
let signedOutByServer = (/** @type {string} */ _message) => {};

/** sessionToken is the signed-in session's token, or null. */
export function sessionToken() {
  return token;
}

/** setSessionToken keeps a new session's token, or forgets it (null). @param {string | null} t */
export function setSessionToken(t) {
  token = t;
  if (t === null) sessionStorage.removeItem(TOKEN);
  else sessionStorage.setItem(TOKEN, t);
}

/** whenSignedOut sets what runs when the server ends the session (a 401). @param {(message: string) => void} fn */
export function whenSignedOut(fn) {
  signedOutByServer = fn;
}

/** An error answer of the API, or no answer at all (status 0). */
export class APIError extends Error {
  /** @param {number} status @param {unknown} body */
  constructor(status, body) {
    const e = /** @type {{error?: {message?: string, code?: string, field?: string, fields?: Record<string, string>}} | null} */ (body)?.error || {};
    super(e.message || `The server answered ${status}.`);
    this.status = status;
    this.code = e.code || "";
    this.field = e.field || "";
    // fields gives several fields their own problem (a form submission).
    this.fields = e.fields || null;
  }
}

/**
 * request calls the API; T is the answer's type, which the endpoint's
 * function names.
 * @template T
 * @param {string} method @param {string} path @param {unknown} [body]
 * @returns {Promise<T>}
 */
async function request(method, path, body) {
  /** @type {RequestInit & {headers: Record<string, string>}} */
  const opts = { method, headers: {} };
  if (token) opts.headers.Authorization = "Bearer " + token;
  if (body instanceof FormData) opts.body = body;
  else if (body instanceof Blob) {
    // A file as it is, with its own type (a CSV upload is text/csv).
    opts.headers["Content-Type"] = body.type;
    opts.body = body;
  } else if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, opts);
  } catch {
    throw new APIError(0, { error: { message: "The server cannot be reached. Check your connection and try again." } });
  }
  if (res.status === 204) return /** @type {T} */ (null);
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    if (res.status === 401 && token && path !== LOGIN) signedOutByServer("Your sign-in has ended. Please sign in again.");
    throw new APIError(res.status, data);
  }
  return data;
}

/**
 * blob fetches, with the session's token, what a link or an <audio src>
 * could not (they send no token): a CSV export, a call's recording.
 * @param {string} path
 */
async function blob(path) {
  const res = await fetch(path, { headers: { Authorization: "Bearer " + token } });
  if (!res.ok) throw new APIError(res.status, await res.json().catch(() => null));
  return res.blob();
}

/** download fetches a file with the session's token and saves it as name. @param {string} path @param {string} name */
async function download(path, name) {
  const url = URL.createObjectURL(await blob(path));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** query is a URL's query of the params that have a value. @param {Record<string, unknown>} params */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== null && v !== undefined) q.set(k, String(v));
  const str = q.toString();
  return str ? "?" + str : "";
}

/** @typedef {Record<string, unknown>} Body a request's JSON body, as a form read it */
/** @typedef {Record<string, unknown>} Filters a list's query parameters */

// ---- accounts and sessions -------------------------------------------------

/** @param {Body} b @returns {Promise<Login>} */ export const login = (b) => request("POST", LOGIN, b);
/** @returns {Promise<null>} */ export const logout = () => request("POST", "/api/auth/logout");
/** @returns {Promise<Me>} */ export const getMe = () => request("GET", "/api/me");
/** @param {Body} b @returns {Promise<null>} */ export const changePassword = (b) => request("POST", "/api/me/password", b);
/** @returns {Promise<{password_reset_by_email?: boolean, sso?: {name: string, url: string, only: boolean}}>} */ export const authMethods = () => request("GET", "/api/auth/methods");
/** @param {Body} b @returns {Promise<Message>} */ export const forgotPassword = (b) => request("POST", "/api/auth/forgot-password", b);
/** @param {{token: string, password: string}} b @returns {Promise<Message>} */ export const resetPassword = (b) => request("POST", "/api/auth/reset-password", b);

/** @returns {Promise<User[]>} */ export const listUsers = () => request("GET", "/api/admin/users");
/** @param {number} id @param {{admin?: boolean, disabled?: boolean}} b @returns {Promise<User>} */
export const updateUser = (id, b) => request("PATCH", `/api/admin/users/${id}`, b);
/** @param {number} id @returns {Promise<PasswordReset>} */ export const makeResetLink = (id) => request("POST", `/api/admin/users/${id}/password-reset`);

// ---- projects, members, invitations ----------------------------------------

/** @returns {Promise<Project[]>} */ export const listProjects = () => request("GET", "/api/projects");
/** @param {Body} b @returns {Promise<Project>} */ export const createProject = (b) => request("POST", "/api/projects", b);
/** @param {number} id @param {Body} b @returns {Promise<Project>} */ export const updateProject = (id, b) => request("PATCH", `/api/projects/${id}`, b);
/** @param {number} id @returns {Promise<null>} */ export const deleteProject = (id) => request("DELETE", `/api/projects/${id}`);

/** @param {number} pid @returns {Promise<Member[]>} */ export const listMembers = (pid) => request("GET", `/api/projects/${pid}/members`);
/** @param {number} pid @param {number} uid @param {{role: string}} b @returns {Promise<Member>} */
export const updateMember = (pid, uid, b) => request("PATCH", `/api/projects/${pid}/members/${uid}`, b);
/** @param {number} pid @param {number} uid @returns {Promise<null>} */ export const removeMember = (pid, uid) => request("DELETE", `/api/projects/${pid}/members/${uid}`);

/** @param {number} pid @returns {Promise<Invite[]>} */ export const listInvites = (pid) => request("GET", `/api/projects/${pid}/invites`);
/** @param {number} pid @param {Body} b @returns {Promise<Invite>} */ export const createInvite = (pid, b) => request("POST", `/api/projects/${pid}/invites`, b);
/** @param {number} id @returns {Promise<null>} */ export const withdrawInvite = (id) => request("DELETE", `/api/invites/${id}`);
/** @param {string} t @returns {Promise<InviteDetails>} */ export const inviteDetails = (t) => request("POST", "/api/invites/details", { token: t });
/** @param {{token: string, password?: string}} b @returns {Promise<Message>} */ export const acceptInvite = (b) => request("POST", "/api/invites/accept", b);

// ---- agents, their tools and knowledge ------------------------------------

let catalog = /** @type {Promise<Catalog> | null} */ (null);

/** getCatalog is the server's models, voices and event types, fetched once per page load. @returns {Promise<Catalog>} */
export function getCatalog() {
  if (!catalog) catalog = request("GET", "/api/catalog").catch((e) => {
    catalog = null;
    throw e;
  });
  return /** @type {Promise<Catalog>} */ (catalog);
}

/** @param {number} pid @returns {Promise<Agent[]>} */ export const listAgents = (pid) => request("GET", `/api/projects/${pid}/agents`);
/** @param {number} pid @param {Body} b @returns {Promise<Agent>} */ export const createAgent = (pid, b) => request("POST", `/api/projects/${pid}/agents`, b);
/** @param {number | string} id @returns {Promise<Agent>} */ export const getAgent = (id) => request("GET", `/api/agents/${id}`);
/** @param {number} id @param {Body} b @returns {Promise<Agent>} */ export const updateAgent = (id, b) => request("PATCH", `/api/agents/${id}`, b);
/** @param {number} id @returns {Promise<null>} */ export const deleteAgent = (id) => request("DELETE", `/api/agents/${id}`);

/** @param {number} id @param {string} [cursor] @returns {Promise<VersionPage>} */
export const listVersions = (id, cursor) => request("GET", `/api/agents/${id}/versions` + query({ cursor }));
/** getVersion is version n, with diff: compared with version diff. @param {number} id @param {number} n @param {number} [diff] @returns {Promise<AgentVersion>} */
export const getVersion = (id, n, diff) => request("GET", `/api/agents/${id}/versions/${n}` + query({ diff }));
/** publishVersion makes version n the one conversations run (an older one rolls back). @param {number} id @param {number} n @returns {Promise<Agent>} */
export const publishVersion = (id, n) => request("POST", `/api/agents/${id}/versions/${n}/publish`);

/** testSessionURL is where the Test panel's SDK client starts a console test session. @param {number} id */
export const testSessionURL = (id) => `/api/agents/${id}/test-session`;

/** @param {number} id @returns {Promise<Tool[]>} */ export const listTools = (id) => request("GET", `/api/agents/${id}/tools`);
/** @param {number} id @param {Body} b @returns {Promise<Tool>} */ export const createTool = (id, b) => request("POST", `/api/agents/${id}/tools`, b);
/** @param {number} id @param {Body} b @returns {Promise<Tool>} */ export const updateTool = (id, b) => request("PATCH", `/api/tools/${id}`, b);
/** @param {number} id @returns {Promise<null>} */ export const deleteTool = (id) => request("DELETE", `/api/tools/${id}`);
/** @param {number} id @returns {Promise<TestScenario[]>} */ export const listScenarios = (id) => request("GET", `/api/agents/${id}/scenarios`);
/** @param {number} id @param {Body} b @returns {Promise<TestScenario>} */ export const createScenario = (id, b) => request("POST", `/api/agents/${id}/scenarios`, b);
/** @param {number} id @param {Body} b @returns {Promise<TestScenario>} */ export const updateScenario = (id, b) => request("PATCH", `/api/scenarios/${id}`, b);
/** @param {number} id @returns {Promise<null>} */ export const deleteScenario = (id) => request("DELETE", `/api/scenarios/${id}`);
/** @param {number} id @param {Body} b @returns {Promise<TestRun>} */ export const startTestRun = (id, b) => request("POST", `/api/agents/${id}/test-runs`, b);
/** @param {number} id @returns {Promise<TestRunPage>} */ export const listTestRuns = (id) => request("GET", `/api/agents/${id}/test-runs?limit=100`);
/** @param {number} id @returns {Promise<TestRun>} */ export const getTestRun = (id) => request("GET", `/api/test-runs/${id}`);
/** @param {number} id @returns {Promise<MCPListing>} */ export const listMCPTools = (id) => request("GET", `/api/tools/${id}/mcp-tools`);

/** @param {number} id @returns {Promise<KnowledgeDocument[]>} */ export const listDocuments = (id) => request("GET", `/api/agents/${id}/knowledge`);
/** @param {number} id @param {FormData} b @returns {Promise<KnowledgeDocument>} */ export const uploadDocument = (id, b) => request("POST", `/api/agents/${id}/knowledge`, b);
/** @param {number} id @returns {Promise<null>} */ export const deleteDocument = (id) => request("DELETE", `/api/knowledge/${id}`);
/** @param {number} id @param {string} q @returns {Promise<KnowledgeSearch>} */
export const searchKnowledge = (id, q) => request("GET", `/api/agents/${id}/knowledge/search` + query({ q }));

// ---- channels, keys, forms and leads ---------------------------------------

/** @param {number} pid @returns {Promise<Channel[]>} */ export const listChannels = (pid) => request("GET", `/api/projects/${pid}/channels`);
/** @param {number} pid @param {Body} b @returns {Promise<Channel>} */ export const createChannel = (pid, b) => request("POST", `/api/projects/${pid}/channels`, b);
/** @param {number | string} id @returns {Promise<Channel>} */ export const getChannel = (id) => request("GET", `/api/channels/${id}`);
/** @param {number} id @param {Body} b @returns {Promise<Channel>} */ export const updateChannel = (id, b) => request("PATCH", `/api/channels/${id}`, b);
/** @param {number} id @returns {Promise<null>} */ export const deleteChannel = (id) => request("DELETE", `/api/channels/${id}`);

/** getKey is the channel's key, or null when it has none. @param {number | string} id @returns {Promise<WidgetKey | null>} */
export const getKey = (id) => request("GET", `/api/channels/${id}/key`);
/** @param {number} id @param {Body} b @returns {Promise<CreatedWidgetKey>} */ export const createKey = (id, b) => request("POST", `/api/channels/${id}/key`, b);
/** @param {number} id @param {Body} b @returns {Promise<WidgetKey>} */ export const updateKey = (id, b) => request("PATCH", `/api/channels/${id}/key`, b);
/** @param {number} id @returns {Promise<null>} */ export const revokeKey = (id) => request("DELETE", `/api/channels/${id}/key`);
/** @param {number} id @returns {Promise<Snippets>} */ export const getSnippets = (id) => request("GET", `/api/channels/${id}/snippets`);
/** @param {number} id @returns {Promise<{attempts: NotifyAttempt[]}>} */
export const listNotifyAttempts = (id) => request("GET", `/api/channels/${id}/notify-attempts?limit=100`);
/** submitForm posts a form as its visitors do. @param {number} id @param {Body} b @returns {Promise<FormSubmitAnswer>} */
export const submitForm = (id, b) => request("POST", `/api/channels/form/submit/${id}`, b);

/** @param {number} pid @param {Filters} f @returns {Promise<LeadPage>} */ export const listLeads = (pid, f) => request("GET", `/api/projects/${pid}/leads` + query(f));
/** @param {number} id @returns {Promise<LeadDetail>} */ export const getLead = (id) => request("GET", `/api/leads/${id}`);
/** @param {number} id @returns {Promise<null>} */ export const deleteLead = (id) => request("DELETE", `/api/leads/${id}`);
/** @param {number} pid @param {Filters} f @param {string} name */
export const downloadLeadsCSV = (pid, f, name) => download(`/api/projects/${pid}/leads.csv` + query(f), name);

// ---- conversations and analytics -------------------------------------------

/** @param {number} pid @param {Filters} f @returns {Promise<ConversationPage>} */
export const listConversations = (pid, f) => request("GET", `/api/projects/${pid}/conversations` + query(f));
/** @param {string} id @returns {Promise<Conversation>} */ export const getConversation = (id) => request("GET", `/api/conversations/${id}`);
/** @param {string} id @returns {Promise<null>} */ export const deleteConversation = (id) => request("DELETE", `/api/conversations/${id}`);
/** @param {string} id @returns {Promise<{deliveries: Delivery[]}>} */
export const listConversationDeliveries = (id) => request("GET", `/api/conversations/${id}/deliveries`);
/** recording fetches a call's recording (its url in the conversation). @param {string} url */
export const recording = (url) => blob(url);

/** @param {number} pid @param {Filters} f @returns {Promise<Analytics>} */ export const getAnalytics = (pid, f) => request("GET", `/api/projects/${pid}/analytics` + query(f));
/** @param {number} pid @param {Filters} f @param {string} name */
export const downloadAnalyticsCSV = (pid, f, name) => download(`/api/projects/${pid}/analytics.csv` + query(f), name);

// ---- webhooks --------------------------------------------------------------

/** The API's description, whose schemas describe the events. */
export const OPENAPI_URL = "/api/openapi.yaml";

/** @param {number} pid @returns {Promise<{webhooks: WebhookEndpoint[]}>} */ export const listWebhooks = (pid) => request("GET", `/api/projects/${pid}/webhooks`);
/** @param {number} pid @param {Body} b @returns {Promise<WebhookEndpointWithSecret>} */
export const createWebhook = (pid, b) => request("POST", `/api/projects/${pid}/webhooks`, b);
/** @param {number | string} id @returns {Promise<WebhookEndpoint>} */ export const getWebhook = (id) => request("GET", `/api/webhooks/${id}`);
/** @param {number | string} id @param {Body} b @returns {Promise<WebhookEndpoint>} */ export const updateWebhook = (id, b) => request("PATCH", `/api/webhooks/${id}`, b);
/** @param {number | string} id @returns {Promise<null>} */ export const deleteWebhook = (id) => request("DELETE", `/api/webhooks/${id}`);
/** @param {number} id @returns {Promise<WebhookEndpointWithSecret>} */ export const rotateWebhookSecret = (id) => request("POST", `/api/webhooks/${id}/rotate-secret`);
/** @param {number} id @returns {Promise<Delivery>} */ export const sendTestEvent = (id) => request("POST", `/api/webhooks/${id}/test`);
/** @param {number} id @returns {Promise<{deliveries: Delivery[]}>} */
export const listDeliveries = (id) => request("GET", `/api/webhooks/${id}/deliveries?limit=50`);
/** @param {number} id @param {number} did @returns {Promise<Delivery>} */ export const getDelivery = (id, did) => request("GET", `/api/webhooks/${id}/deliveries/${did}`);
/** @param {number} id @param {number} did @returns {Promise<Delivery>} */
export const retryDelivery = (id, did) => request("POST", `/api/webhooks/${id}/deliveries/${did}/retry`);

// ---- telephony -------------------------------------------------------------

/** @param {number} pid @returns {Promise<PhoneNumber[]>} */ export const listNumbers = (pid) => request("GET", `/api/projects/${pid}/telephony/numbers`);
/** @param {number} pid @param {string} areaCode @returns {Promise<AvailableNumber[]>} */
export const availableNumbers = (pid, areaCode) => request("GET", `/api/projects/${pid}/telephony/numbers/available` + query({ area_code: areaCode }));
/** @param {number} pid @param {{phone_number: string, agent_id: number}} b @returns {Promise<PhoneNumber>} */
export const buyNumber = (pid, b) => request("POST", `/api/projects/${pid}/telephony/numbers`, b);
/** @param {number} pid @param {number} id @returns {Promise<null>} */ export const releaseNumber = (pid, id) => request("DELETE", `/api/projects/${pid}/telephony/numbers/${id}`);
/** @param {number} id @param {Body} b @returns {Promise<OutboundCall>} */ export const placeCall = (id, b) => request("POST", `/api/agents/${id}/telephony/outbound`, b);
/** @param {number} id @param {string} sid @returns {Promise<null>} */ export const hangUp = (id, sid) => request("DELETE", `/api/agents/${id}/telephony/calls/${sid}`);
/** @param {string} sid @returns {Promise<Call>} */ export const getCall = (sid) => request("GET", `/api/calls/${sid}`);
/** startTestCall records a browser test call of the agent. @param {number} id @returns {Promise<TestCall>} */
export const startTestCall = (id) => request("POST", `/api/agents/${id}/test-calls`);

// ---- campaigns and the do-not-call list ------------------------------------

/** @param {number} pid @param {Filters} f @returns {Promise<CampaignPage>} */
export const listCampaigns = (pid, f) => request("GET", `/api/projects/${pid}/campaigns` + query(f));
/** @param {number} pid @param {Body} b @returns {Promise<Campaign>} */ export const createCampaign = (pid, b) => request("POST", `/api/projects/${pid}/campaigns`, b);
/** @param {number | string} id @returns {Promise<Campaign>} */ export const getCampaign = (id) => request("GET", `/api/campaigns/${id}`);
/** @param {number} id @param {Body} b @returns {Promise<Campaign>} */ export const updateCampaign = (id, b) => request("PATCH", `/api/campaigns/${id}`, b);
/** @param {number} id @returns {Promise<null>} */ export const deleteCampaign = (id) => request("DELETE", `/api/campaigns/${id}`);
/** campaignAction starts, pauses, resumes or cancels a campaign. @param {number} id @param {"start" | "pause" | "resume" | "cancel"} action @returns {Promise<Campaign>} */
export const campaignAction = (id, action) => request("POST", `/api/campaigns/${id}/${action}`);
/** uploadContacts sends a CSV file as it is (text/csv). @param {number} id @param {string | Blob} csv @returns {Promise<ContactUpload>} */
export const uploadContacts = (id, csv) => request("POST", `/api/campaigns/${id}/contacts`, new Blob([csv], { type: "text/csv" }));
/** @param {number} id @param {Filters} f @returns {Promise<ContactPage>} */
export const listContacts = (id, f) => request("GET", `/api/campaigns/${id}/contacts` + query(f));
/** contactsCSVURL is where contacts.csv is, for the contacts a status filter selects. @param {number} id @param {Filters} f */
export const contactsCSVURL = (id, f) => `/api/campaigns/${id}/contacts.csv` + query(f);
/** @param {number} id @param {Filters} f @param {string} name */
export const downloadContactsCSV = (id, f, name) => download(contactsCSVURL(id, f), name);

/** @param {number} pid @param {Filters} f @returns {Promise<DoNotCallPage>} */ export const listDoNotCall = (pid, f) => request("GET", `/api/projects/${pid}/dnc` + query(f));
/** @param {number} pid @param {{phone_number: string, reason: string}} b @returns {Promise<DoNotCall>} */
export const addDoNotCall = (pid, b) => request("POST", `/api/projects/${pid}/dnc`, b);
/** @param {number} pid @param {string} number @returns {Promise<null>} */
export const removeDoNotCall = (pid, number) => request("DELETE", `/api/projects/${pid}/dnc/${encodeURIComponent(number)}`);
/** @param {number} pid @returns {Promise<ProviderAccount[]>} */ export const listProviderAccounts = (pid) => request("GET", `/api/projects/${pid}/providers`);
/** @param {number} pid @param {string} kind @returns {Promise<ProviderAccount>} */
export const getProviderAccount = (pid, kind) => request("GET", `/api/projects/${pid}/providers/${encodeURIComponent(kind)}`);
/** @param {number} pid @param {string} kind @param {{api_key: string, base_url?: string}} b @returns {Promise<ProviderAccount>} */
export const putProviderAccount = (pid, kind, b) => request("PUT", `/api/projects/${pid}/providers/${encodeURIComponent(kind)}`, b);
/** @param {number} pid @param {string} kind */
export const deleteProviderAccount = (pid, kind) => request("DELETE", `/api/projects/${pid}/providers/${encodeURIComponent(kind)}`);
/** @param {number} pid @returns {Promise<APIKey[]>} */ export const listAPIKeys = (pid) => request("GET", `/api/projects/${pid}/api-keys`);
/** @param {number} pid @param {{name: string, role: string, expires_at?: string}} b @returns {Promise<APIKey>} */
export const createAPIKey = (pid, b) => request("POST", `/api/projects/${pid}/api-keys`, b);
/** @param {number} id */ export const revokeAPIKey = (id) => request("DELETE", `/api/api-keys/${id}`);

// ---- the audit log ----------------------------------------------------------
// A project's (owners) or, without a project, the instance's (administrators).

/** auditPath is the project's log, or the instance's for pid 0. @param {number} pid */
const auditPath = (pid) => (pid ? `/api/projects/${pid}/audit-log` : "/api/admin/audit-log");
/** @param {number} pid @param {Filters} f @returns {Promise<AuditPage>} */
export const listAuditLog = (pid, f) => request("GET", auditPath(pid) + query(f));
/** @param {number} pid @param {Filters} f @param {string} name */
export const downloadAuditCSV = (pid, f, name) => download(auditPath(pid) + ".csv" + query(f), name);
