package app_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// auditCase is one change through the API: the request that succeeds
// (after prep, when set) and the entry it must write.
type auditCase struct {
	body   any
	status int
	action string
	// instance: the entry is the instance's (no project).
	instance bool
	// as picks the caller other than the project's owner.
	as func(t *testing.T, s *apptest.Server, f tenants) string
	// prep readies the change, as the owner; it may name the path's
	// objects it made (by parameter).
	prep func(t *testing.T, s *apptest.Server, f tenants, tok string) map[string]string
	// bodyOf, when set, is the body, made of the path's objects.
	bodyOf func(own map[string]string) any
}

// numberedAgent makes an agent with a number bought from the carrier, so
// that it can place calls.
func numberedAgent(t *testing.T, s *apptest.Server, f tenants, tok string) map[string]string {
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects/"+itoa(f.ownProject)+"/agents", tok, map[string]string{"name": "Caller"}, &a)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(f.ownProject)+"/telephony/numbers", tok,
		map[string]any{"phone_number": "+1415555" + itoa(9000+a.ID%1000), "agent_id": a.ID}, nil)
	return map[string]string{"agent_id": itoa(a.ID)}
}

// notChanges are the mutating routes that change nothing audited, each
// with why; every other mutating route of the API has a case below.
var notChanges = map[string]string{
	"POST /api/agents/{agent_id}/test-session":               "a console test conversation; its record is the conversation",
	"POST /api/agents/{agent_id}/test-session/analytics":     "a console test conversation's events",
	"POST /api/agents/{agent_id}/test-session/tools/execute": "a tool run by a console test conversation",
	"POST /api/agents/{agent_id}/test-calls":                 "a console test call; its record is the call",
	"POST /api/auth/login":                                   "TestAuditSignIns: signing in is logged with its outcome there",
	"POST /api/telephony/amd":                                "the carrier's callback",
	"POST /api/telephony/inbound":                            "the carrier's callback",
	"POST /api/telephony/status":                             "the carrier's callback",
	"POST /api/channels/form/submit/{channel_id}":            "a visitor's submission: a lead, no change of settings",
	"POST /api/invites/details":                              "reads an invitation",
	"POST /api/auth/forgot-password":                         "public and needs mail to succeed; the store logs its link as user.password_reset_link, not tested over HTTP here",
	"POST /api/auth/reset-password":                          "TestAuditSignIns: a password set by a reset link",
	"POST /api/invites/accept":                               "TestAuditSignIns: an invitation accepted",
}

func owner(t *testing.T, s *apptest.Server, f tenants) string { return s.Token(t, f.ownerID) }
func admin(t *testing.T, s *apptest.Server, _ tenants) string { return s.Admin(t) }

// auditCases has, for every mutating route of the management API, a
// request that succeeds and the entry it writes.
func auditCases() map[string]auditCase {
	tool := map[string]string{"name": "lookup2", "description": "Look up.", "url": "https://hooks.example.com/y", "method": "POST"}
	start := func(t *testing.T, s *apptest.Server, f tenants, tok string) map[string]string {
		s.Must(t, 200, "POST", "/api/campaigns/"+itoa(f.own.campaign)+"/start", tok, nil, nil)
		return nil
	}
	return map[string]auditCase{
		"PATCH /api/admin/users/{user_id}":                 {body: map[string]bool{"admin": false}, status: 200, action: "user.update", instance: true, as: admin},
		"POST /api/admin/users/{user_id}/password-reset":   {status: 201, action: "user.password_reset_link", instance: true, as: admin},
		"DELETE /api/agents/{agent_id}":                    {status: 204, action: "agent.delete"},
		"PATCH /api/agents/{agent_id}":                     {body: map[string]string{"greeting": "Hello there"}, status: 200, action: "agent.update"},
		"POST /api/agents/{agent_id}/knowledge":            {body: map[string]string{"title": "FAQ", "content": "Open every day."}, status: 201, action: "document.create"},
		"POST /api/agents/{agent_id}/scenarios":            {body: map[string]any{"name": "other", "persona": "A customer", "goal": "Ask", "success_criteria": "Answered"}, status: 201, action: "scenario.create"},
		"POST /api/agents/{agent_id}/telephony/outbound":   {body: map[string]string{"to_number": "+14155550177"}, status: 201, action: "call.place", prep: numberedAgent},
		"POST /api/agents/{agent_id}/test-runs":            {body: map[string]any{}, status: 201, action: "test_run.create"},
		"POST /api/agents/{agent_id}/tools":                {body: tool, status: 201, action: "tool.create"},
		"POST /api/agents/{agent_id}/versions/{n}/publish": {status: 200, action: "agent.publish"},
		"DELETE /api/api-keys/{key_id}":                    {status: 204, action: "api_key.revoke"},
		"POST /api/auth/logout":                            {status: 204, action: "auth.sign_out", instance: true},
		"DELETE /api/campaigns/{campaign_id}":              {status: 204, action: "campaign.delete"},
		"PATCH /api/campaigns/{campaign_id}":               {body: map[string]int{"max_attempts": 2}, status: 200, action: "campaign.update"},
		"POST /api/campaigns/{campaign_id}/cancel":         {status: 200, action: "campaign.cancel"},
		"POST /api/campaigns/{campaign_id}/contacts":       {body: []map[string]string{{"phone_number": "+14155550102"}}, status: 200, action: "campaign.contacts_add"},
		"POST /api/campaigns/{campaign_id}/start":          {status: 200, action: "campaign.start"},
		"POST /api/campaigns/{campaign_id}/pause":          {status: 200, action: "campaign.pause", prep: start},
		"POST /api/campaigns/{campaign_id}/resume": {status: 200, action: "campaign.resume", prep: func(t *testing.T, s *apptest.Server, f tenants, tok string) map[string]string {
			start(t, s, f, tok)
			s.Must(t, 200, "POST", "/api/campaigns/"+itoa(f.own.campaign)+"/pause", tok, nil, nil)
			return nil
		}},
		"DELETE /api/agents/{agent_id}/telephony/calls/{call_sid}": {status: 204, action: "call.end", prep: func(t *testing.T, s *apptest.Server, f tenants, tok string) map[string]string {
			own := numberedAgent(t, s, f, tok)
			var call agentline.Call
			s.Must(t, 201, "POST", "/api/agents/"+own["agent_id"]+"/telephony/outbound", tok, map[string]string{"to_number": "+14155550166"}, &call)
			own["call_sid"] = call.CallSID
			return own
		}},
		"DELETE /api/channels/{channel_id}":           {status: 204, action: "channel.delete"},
		"PATCH /api/channels/{channel_id}":            {body: map[string]string{"name": "renamed"}, status: 200, action: "channel.update"},
		"DELETE /api/channels/{channel_id}/key":       {status: 204, action: "widget_key.revoke"},
		"PATCH /api/channels/{channel_id}/key":        {body: map[string]int{"rate_limit_per_minute": 30}, status: 200, action: "widget_key.update"},
		"POST /api/channels/{channel_id}/key":         {status: 201, action: "widget_key.rotate"},
		"DELETE /api/conversations/{conversation_id}": {status: 204, action: "conversation.delete"},
		"DELETE /api/invites/{invite_id}":             {status: 204, action: "invite.delete"},
		"DELETE /api/knowledge/{document_id}":         {status: 204, action: "document.delete"},
		"DELETE /api/leads/{lead_id}":                 {status: 204, action: "lead.delete"},
		"POST /api/me/password": {body: map[string]string{"current_password": apptest.Password, "new_password": "a new and long password"}, status: 204, action: "user.password_set", instance: true, as: func(t *testing.T, s *apptest.Server, f tenants) string {
			_, tok := s.NewUser(t, "changer"+itoa(f.ownProject)+"@example.com")
			return tok
		}},
		"POST /api/projects":                                   {body: map[string]string{"name": "new"}, status: 201, action: "project.create"},
		"DELETE /api/projects/{project_id}":                    {status: 204, action: "project.delete", instance: true},
		"PATCH /api/projects/{project_id}":                     {body: map[string]string{"name": "renamed"}, status: 200, action: "project.update"},
		"POST /api/projects/{project_id}/agents":               {body: map[string]string{"name": "Bo"}, status: 201, action: "agent.create"},
		"POST /api/projects/{project_id}/api-keys":             {body: map[string]string{"name": "ci2", "role": "viewer"}, status: 201, action: "api_key.create"},
		"POST /api/projects/{project_id}/campaigns":            {body: map[string]any{"name": "More"}, status: 201, action: "campaign.create"},
		"POST /api/projects/{project_id}/channels":             {body: map[string]string{"type": "form", "name": "leads"}, status: 201, action: "channel.create"},
		"POST /api/projects/{project_id}/dnc":                  {body: map[string]string{"phone_number": "+14155559911"}, status: 201, action: "do_not_call.add"},
		"DELETE /api/projects/{project_id}/dnc/{phone_number}": {status: 204, action: "do_not_call.delete"},
		"POST /api/projects/{project_id}/invites":              {body: map[string]string{"email": "someone@example.com", "role": "editor"}, status: 201, action: "invite.create"},
		"POST /api/projects/{project_id}/members":              {body: map[string]string{"email": "someone@example.com", "role": "editor"}, status: 202, action: "invite.create"},
		"DELETE /api/projects/{project_id}/members/{user_id}":  {status: 204, action: "member.remove"},
		"PATCH /api/projects/{project_id}/members/{user_id}":   {body: map[string]string{"role": "editor"}, status: 200, action: "member.role_change"},
		"PUT /api/projects/{project_id}/providers/{kind}":      {body: map[string]string{"api_key": "sk-test"}, status: 200, action: "provider_account.save"},
		"DELETE /api/projects/{project_id}/providers/{kind}": {status: 204, action: "provider_account.delete", prep: func(t *testing.T, s *apptest.Server, f tenants, tok string) map[string]string {
			s.Must(t, 200, "PUT", "/api/projects/"+itoa(f.ownProject)+"/providers/openai", tok, map[string]string{"api_key": "sk-test"}, nil)
			return nil
		}},
		"POST /api/projects/{project_id}/telephony/numbers": {status: 201, action: "number.create",
			prep: func(t *testing.T, s *apptest.Server, f tenants, tok string) map[string]string {
				var a agentline.Agent
				s.Must(t, 201, "POST", "/api/projects/"+itoa(f.ownProject)+"/agents", tok, map[string]string{"name": "Numbered"}, &a)
				return map[string]string{"new_agent": itoa(a.ID)}
			},
			bodyOf: func(own map[string]string) any {
				return map[string]any{"phone_number": "+14155550188", "agent_id": json.Number(own["new_agent"])}
			}},
		"DELETE /api/projects/{project_id}/telephony/numbers/{number_id}": {status: 204, action: "number.delete"},
		"PATCH /api/projects/{project_id}/telephony/numbers/{number_id}":  {body: map[string]string{"status": "suspended"}, status: 200, action: "number.update"},
		"POST /api/projects/{project_id}/webhooks":                        {body: map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"*"}}, status: 201, action: "webhook.create"},
		"DELETE /api/scenarios/{scenario_id}":                             {status: 204, action: "scenario.delete"},
		"PATCH /api/scenarios/{scenario_id}":                              {body: map[string]string{"goal": "Ask again"}, status: 200, action: "scenario.update"},
		"DELETE /api/tools/{tool_id}":                                     {status: 204, action: "tool.delete"},
		"PATCH /api/tools/{tool_id}":                                      {body: map[string]string{"description": "Look it up."}, status: 200, action: "tool.update"},
		"DELETE /api/webhooks/{webhook_id}":                               {status: 204, action: "webhook.delete"},
		"PATCH /api/webhooks/{webhook_id}":                                {body: map[string]string{"description": "orders"}, status: 200, action: "webhook.update"},
		"POST /api/webhooks/{webhook_id}/deliveries/{delivery_id}/retry": {status: 202, action: "webhook.delivery_retry",
			prep: func(t *testing.T, s *apptest.Server, f tenants, tok string) map[string]string {
				// As the delivery worker leaves it once it gives up. An
				// attempt in flight (the endpoint refuses, and retries come
				// every few seconds) writes it pending again when it ends;
				// once it stays failed, no later attempt starts.
				ctx := context.Background()
				for range 20 {
					if err := s.App.Store.ExecAdmin(ctx, "UPDATE webhook_deliveries SET status = 'failed' WHERE id = "+itoa(f.own.delivery)); err != nil {
						t.Fatal(err)
					}
					time.Sleep(300 * time.Millisecond)
					d, err := s.App.Store.WebhookDelivery(ctx, f.ownProject, f.own.webhook, f.own.delivery)
					if err != nil {
						t.Fatal(err)
					}
					if d.Status == agentline.DeliveryFailed {
						return nil
					}
				}
				t.Fatal("the delivery did not stay failed")
				return nil
			}},
		"POST /api/webhooks/{webhook_id}/rotate-secret": {status: 200, action: "webhook.rotate_secret"},
		"POST /api/webhooks/{webhook_id}/test":          {status: 202, action: "webhook.test"},
	}
}

// auditServer is a server whose every mutating route can succeed: the
// carrier and the provider are fakes on loopback, webhooks may use them.
func auditServer(t *testing.T, databaseURL string) *apptest.Server {
	carrier := twiliofake.New(twiliofake.Options{})
	t.Cleanup(carrier.Close)
	provider := httptest.NewServer(providerfake.New("sk-test", "g-test"))
	t.Cleanup(provider.Close)
	return apptest.Start(t, apptest.Config(t, databaseURL, map[string]string{
		"OPENAI_BASE_URL": provider.URL, "GEMINI_BASE_URL": provider.URL, "GEMINI_API_KEY": "g-test", "OPENAI_API_KEY": "sk-test",
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "agentline.example.com", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
		"TWILIO_ACCOUNT_SID": carrier.AccountSID(), "TWILIO_AUTH_TOKEN": carrier.AuthToken(), "TWILIO_API_BASE_URL": carrier.URL(),
	}))
}

// auditBase is the owner, member and other tenant every case's fresh
// project is made with.
func auditBase(t *testing.T, s *apptest.Server) tenants {
	o, _ := s.NewUser(t, "owner@example.com")
	member, memberTok := s.NewUser(t, "member@example.com")
	outsider, outTok := s.NewUser(t, "outsider@example.com")
	var q agentline.Project
	var b agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", outTok, map[string]string{"name": "other"}, &q)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(q.ID)+"/agents", outTok, map[string]string{"name": "other"}, &b)
	return tenants{ownerID: o.ID, otherUser: outsider.ID, otherProject: q.ID, otherAgent: b.ID,
		memberID: member.ID, memberEmail: member.Email, memberTok: memberTok}
}

// lastAuditID is the id of the newest entry of the whole log.
func lastAuditID(t *testing.T, s *apptest.Server, projects ...int64) int64 {
	t.Helper()
	var last int64
	for _, p := range append(projects, 0) {
		list, err := s.App.Store.AuditLog(context.Background(), agentline.AuditFilter{ProjectID: p, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 && list[0].ID > last {
			last = list[0].ID
		}
	}
	return last
}

// Every mutating route of the management API, found in the route table,
// writes exactly one entry when it succeeds, naming its resource: its action, the project it changed
// (none for the instance's), the person who asked, from their client and
// under the request's id. A new route without a case here fails.
func TestEveryChangeIsAudited(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, databaseURL string) {
		s := auditServer(t, databaseURL)
		base := auditBase(t, s)
		cases := auditCases()
		seen := 0
		for _, r := range s.App.RouteTable() {
			name := r.Method + " " + r.Pattern
			if !slices.Contains([]string{"POST", "PUT", "PATCH", "DELETE"}, r.Method) || !strings.HasPrefix(r.Pattern, "/api/") {
				continue
			}
			if _, ok := notChanges[name]; ok {
				continue
			}
			c, ok := cases[name]
			if !ok {
				t.Errorf("%s changes something (%s) and has no case in auditCases: add the request that succeeds and the entry it writes, or say in notChanges why it changes nothing", name, r.Auth)
				continue
			}
			seen++
			t.Run(name, func(t *testing.T) { checkAudited(t, s, base, r, c) })
		}
		if seen != len(cases) {
			t.Errorf("%d cases, %d of them routes: a case names no route", len(cases), seen)
		}
	})
}

// checkAudited makes a fresh project, sends c's request and looks for
// its entry among those written since.
func checkAudited(t *testing.T, s *apptest.Server, base tenants, r httpx.Route, c auditCase) {
	f := newTenants(t, s, base)
	as := c.as
	if as == nil {
		as = owner
	}
	tok := as(t, s, f)
	own := map[string]string{}
	for name, fx := range paramFixtures {
		own[name], _ = fx(f)
	}
	if c.prep != nil {
		for name, v := range c.prep(t, s, f, s.Token(t, f.ownerID)) {
			own[name] = v
		}
	}
	path := paramPattern.ReplaceAllStringFunc(r.Pattern, func(m string) string { return own[m[1:len(m)-1]] })
	body := c.body
	if c.bodyOf != nil {
		body = c.bodyOf(own)
	}
	if m, ok := body.(map[string]any); ok && r.Pattern == "/api/projects/{project_id}/campaigns" {
		m["agent_id"] = f.ownAgent
	}
	before := lastAuditID(t, s, f.ownProject)
	res := s.Must(t, c.status, r.Method, path, tok, body, nil)
	project := f.ownProject
	if c.instance {
		project = 0
	} else if r.Pattern == "/api/projects" {
		var p agentline.Project
		res.JSON(t, &p)
		project = p.ID
	}
	list, err := s.App.Store.AuditLog(context.Background(), agentline.AuditFilter{ProjectID: project, Action: c.action})
	if err != nil {
		t.Fatal(err)
	}
	var e *agentline.AuditEntry
	for i := range list {
		if list[i].ID > before {
			e = &list[i]
			break
		}
	}
	if e == nil {
		t.Fatalf("no %s entry in project %d's log after %s %s", c.action, project, r.Method, path)
	}
	var who struct{ User agentline.User }
	if r.Pattern == "/api/auth/logout" {
		who.User = agentline.User{ID: f.ownerID, Email: "owner@example.com"}
	} else {
		s.Must(t, 200, "GET", "/api/me", tok, nil, nil).JSON(t, &who)
	}
	if e.Actor != (agentline.Actor{Kind: agentline.ActorUser, ID: who.User.ID, Email: who.User.Email}) {
		t.Errorf("actor %+v, want the caller %d %s", e.Actor, who.User.ID, who.User.Email)
	}
	if e.ClientIP == "" || e.RequestID != res.Header.Get("X-Request-Id") {
		t.Errorf("client %q, request id %q (answer's %q)", e.ClientIP, e.RequestID, res.Header.Get("X-Request-Id"))
	}
	if raw, _ := json.Marshal(e); strings.Contains(string(raw), "sk-test") || strings.Contains(string(raw), "whsec_") {
		t.Errorf("a secret in the entry: %s", raw)
	}
	checkAuditResource(t, s, r, own, *e)
	if n := entriesOfRequest(t, s, before, e.RequestID, project, f.ownProject); n != 1 {
		t.Errorf("%s %s wrote %d entries, want exactly one", r.Method, path, n)
	}
}

// checkAuditResource: an entry names a resource, and a request to one
// object (its id the path's last segment) names that object; a call, which
// a path names by its carrier SID, by its id like every other call entry.
func checkAuditResource(t *testing.T, s *apptest.Server, r httpx.Route, own map[string]string, e agentline.AuditEntry) {
	t.Helper()
	if e.Resource.Kind == "" {
		t.Errorf("entry %s names no resource kind", e.Action)
	}
	last := r.Pattern[strings.LastIndex(r.Pattern, "/")+1:]
	if r.Method == "POST" || !strings.HasPrefix(last, "{") {
		return
	}
	want := own[last[1:len(last)-1]]
	if last == "{call_sid}" {
		c, err := s.App.Store.CallBySID(context.Background(), want)
		if err != nil {
			t.Fatal(err)
		}
		want = itoa(c.ID)
	}
	if e.Resource.ID != want {
		t.Errorf("entry %s names %s %q, want the path's %s, %q", e.Action, e.Resource.Kind, e.Resource.ID, last, want)
	}
}

// entriesOfRequest counts the entries after before, in the projects' logs
// and the instance's, that the request requestID wrote.
func entriesOfRequest(t *testing.T, s *apptest.Server, before int64, requestID string, projects ...int64) int {
	t.Helper()
	n := 0
	projects = append(projects, 0)
	slices.Sort(projects)
	for _, p := range slices.Compact(projects) {
		list, err := s.App.Store.AuditLog(context.Background(), agentline.AuditFilter{ProjectID: p})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			if e.ID > before && e.RequestID == requestID {
				n++
			}
		}
	}
	return n
}
