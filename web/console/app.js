// @ts-check
// agentline console: plain JavaScript on the management API, no framework
// and no build step of its own. This module is the entry: it names the
// pages of each location hash (#/agents/3) and starts the router. The
// modules it imports are bundled into one minified script when the server
// starts (web/bundle.go):
//
//   api.js       every endpoint the console calls, on one request function
//   router.js    the state (who is signed in, the current project, the page)
//   frame.js     the header and banners around every page
//   dom.js       the DOM builder and small rendering helpers
//   forms.js     fields, forms and the API's errors next to their fields
//   secrets.js   secrets shown once, kept on screen until dismissed
//   builder.js   row builders (form fields, tool parameters, data to extract)
//   features.js  reading the deployment's features again after a restart
//   pages/*.js   one module per page family
//
// call.js and call-worklet.js (the agent page's "Call this agent") are
// served on their own and loaded when the Phone tab opens. The page's
// Content-Security-Policy allows no inline script or style.

import { watchFeatures } from "./features.js";
import { banners, header } from "./frame.js";
import { render, start } from "./router.js";
import { forget } from "./secrets.js";
import { agentPage, agentsPage } from "./pages/agents.js";
import { analyticsPage } from "./pages/analytics.js";
import { auditPage, instanceAuditPage } from "./pages/audit.js";
import { invitePage, resetPage, signedInPage, signInPage } from "./pages/auth.js";
import { campaignPage } from "./pages/campaign.js";
import { campaignsPage } from "./pages/campaigns.js";
import { channelPage, channelsPage } from "./pages/channels.js";
import { conversationPage, conversationsPage } from "./pages/conversations.js";
import { leadsPage } from "./pages/leads.js";
import { accountPage, adminPage, membersPage } from "./pages/people.js";
import { callPage } from "./pages/phone.js";
import { projectsPage } from "./pages/projects.js";
import { webhookPage, webhooksPage } from "./pages/webhooks.js";

/** @import {Route} from "./router.js" */

/** @type {Route[]} the pages of a signed-in user: hash, navigation section, page */
const routes = [
  [/^#\/projects$/, "projects", projectsPage],
  [/^#\/account$/, "account", accountPage],
  [/^#\/members$/, "members", membersPage],
  [/^#\/admin$/, "admin", adminPage],
  [/^#\/admin\/audit$/, "admin", instanceAuditPage],
  [/^#\/audit$/, "audit", auditPage],
  [/^#\/agents$/, "agents", agentsPage],
  [/^#\/agents\/(\d+)(?:\/(settings|versions|test|tools|knowledge|tests|phone))?$/, "agents", agentPage],
  [/^#\/channels$/, "channels", channelsPage],
  [/^#\/channels\/(\d+)$/, "channels", channelPage],
  [/^#\/campaigns$/, "campaigns", campaignsPage],
  [/^#\/campaigns\/(\d+)$/, "campaigns", campaignPage],
  [/^#\/conversations$/, "conversations", conversationsPage],
  [/^#\/conversations\/([A-Za-z0-9_]+)$/, "conversations", conversationPage],
  [/^#\/calls\/([A-Za-z0-9]+)$/, "conversations", callPage],
  [/^#\/leads$/, "leads", leadsPage],
  [/^#\/analytics$/, "analytics", analyticsPage],
  [/^#\/webhooks$/, "webhooks", webhooksPage],
  [/^#\/webhooks\/(\d+)$/, "webhooks", webhookPage],
];

/** @type {Route[]} invitation and reset links' pages, which work signed out too */
const links = [
  [/^#\/invite\/([A-Za-z0-9_-]+)$/, "", invitePage],
  [/^#\/reset\/([A-Za-z0-9_-]+)$/, "", resetPage],
  [/^#\/signed-in\/([A-Za-z0-9_-]+)$/, "", signedInPage],
];

start({ routes, links, signIn: signInPage, header, banners, signingOut: () => forget() });
watchFeatures(() => render());
