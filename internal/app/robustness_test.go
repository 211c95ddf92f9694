package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// tenants holds, for the robustness test, one object of each kind in the
// caller's project and one in another tenant's project.
type tenants struct {
	ownerID, ownProject, ownAgent, ownMember int64
	memberID                                 int64
	memberEmail, memberTok                   string
	otherUser, otherProject, otherAgent      int64
	own, other                               domainObjects
}

// domainObjects are the objects of one project that routes address by their
// own ids.
type domainObjects struct {
	number, tool, document, channel, lead int64
	webhook, delivery, invite             int64
	campaign, scenario, testRun, apiKey   int64
	callSID, conversation, doNotCall      string
}

// paramFixtures maps each path parameter name of the routes to a real id in
// the caller's project (own) and one of another tenant (other). A package
// that adds a route with a new {param} adds its name here, with objects it
// makes in newTenants.
var paramFixtures = map[string]func(f tenants) (own, other string){
	"project_id":  func(f tenants) (string, string) { return itoa(f.ownProject), itoa(f.otherProject) },
	"agent_id":    func(f tenants) (string, string) { return itoa(f.ownAgent), itoa(f.otherAgent) },
	"user_id":     func(f tenants) (string, string) { return itoa(f.ownMember), itoa(f.otherUser) },
	"number_id":   func(f tenants) (string, string) { return itoa(f.own.number), itoa(f.other.number) },
	"call_sid":    func(f tenants) (string, string) { return f.own.callSID, f.other.callSID },
	"tool_id":     func(f tenants) (string, string) { return itoa(f.own.tool), itoa(f.other.tool) },
	"document_id": func(f tenants) (string, string) { return itoa(f.own.document), itoa(f.other.document) },
	"channel_id":  func(f tenants) (string, string) { return itoa(f.own.channel), itoa(f.other.channel) },
	"lead_id":     func(f tenants) (string, string) { return itoa(f.own.lead), itoa(f.other.lead) },
	"webhook_id":  func(f tenants) (string, string) { return itoa(f.own.webhook), itoa(f.other.webhook) },
	"delivery_id": func(f tenants) (string, string) { return itoa(f.own.delivery), itoa(f.other.delivery) },
	"conversation_id": func(f tenants) (string, string) {
		return f.own.conversation, f.other.conversation
	},
	"invite_id": func(f tenants) (string, string) { return itoa(f.own.invite), itoa(f.other.invite) },
	"campaign_id": func(f tenants) (string, string) {
		return itoa(f.own.campaign), itoa(f.other.campaign)
	},
	"phone_number": func(f tenants) (string, string) { return f.own.doNotCall, f.other.doNotCall },
	"scenario_id":  func(f tenants) (string, string) { return itoa(f.own.scenario), itoa(f.other.scenario) },
	"run_id":       func(f tenants) (string, string) { return itoa(f.own.testRun), itoa(f.other.testRun) },
	"key_id":       func(f tenants) (string, string) { return itoa(f.own.apiKey), itoa(f.other.apiKey) },
	// A provider kind is named alike in every project; the project id
	// tells them apart.
	"kind": func(tenants) (string, string) { return "openai", "openai" },
	// An agent version: every agent has its first.
	"n": func(tenants) (string, string) { return "1", "1" },
}

// newObjects makes one of each domain object for the agent: a webhook tool,
// a knowledge document and a widget channel with its key through the API, a
// number and a live inbound
// call in the store, as the carrier's webhooks would leave them.
func newObjects(t *testing.T, s *apptest.Server, token string, projectID, agentID int64) domainObjects {
	t.Helper()
	var o domainObjects
	var tool, doc struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/agents/"+itoa(agentID)+"/tools", token,
		map[string]string{"name": "lookup", "description": "Look up.", "url": "https://hooks.example.com/x", "method": "POST"}, &tool)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(agentID)+"/knowledge", token,
		map[string]string{"title": "Returns", "content": "Returns are free within 30 days."}, &doc)
	o.tool, o.document = tool.ID, doc.ID
	var ch struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/projects/"+itoa(projectID)+"/channels", token,
		map[string]any{"type": "voice_widget", "name": "site", "agent_id": agentID}, &ch)
	s.Must(t, 201, "POST", "/api/channels/"+itoa(ch.ID)+"/key", token, nil, nil)
	o.channel = ch.ID
	var form struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/projects/"+itoa(projectID)+"/channels", token, map[string]any{"type": "form", "name": "contact"}, &form)
	// In the store, as a submission leaves it: the per-IP limit of the
	// submit endpoint is not what this fixture is about.
	lead, err := s.App.Store.CreateLead(context.Background(), agentline.Lead{ProjectID: projectID, ChannelID: form.ID,
		Mode: agentline.FormLeadCapture, Answers: map[string]any{"name": "Ada", "email": "ada@example.com"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.lead = lead.ID
	ctx := context.Background()
	seq := phoneSeq.Add(1)
	n, err := s.App.Store.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: projectID, AgentID: &agentID,
		PhoneNumber: fmt.Sprintf("+1415557%04d", seq), Status: agentline.NumberActive, CarrierSID: fmt.Sprintf("PN%032d", seq)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.App.Store.ReserveCall(ctx, agentline.Call{ProjectID: projectID, AgentID: agentID, NumberID: &n.ID,
		CallSID: fmt.Sprintf("CA%032d", seq), Direction: "inbound", From: "+14155550000", To: n.PhoneNumber, Status: agentline.CallInProgress}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	o.number, o.callSID = n.ID, c.CallSID
	o.conversation = agentline.CallConversationID(c.ID)
	o.webhook, o.delivery = newWebhook(t, s, token, projectID)
	var inv struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/projects/"+itoa(projectID)+"/invites", token, map[string]string{"email": "invitee@example.com", "role": "viewer"}, &inv)
	o.invite = inv.ID
	var camp struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/projects/"+itoa(projectID)+"/campaigns", token, map[string]any{"name": "Renewals", "agent_id": agentID}, &camp)
	s.Must(t, 200, "POST", "/api/campaigns/"+itoa(camp.ID)+"/contacts", token, []map[string]string{{"phone_number": "+14155550101"}}, nil)
	o.campaign, o.doNotCall = camp.ID, fmt.Sprintf("+1415556%04d", seq)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(projectID)+"/dnc", token, map[string]string{"phone_number": o.doNotCall}, nil)
	var sc, run struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/agents/"+itoa(agentID)+"/scenarios", token, map[string]any{"name": "ships", "persona": "A customer",
		"goal": "Learn when the order ships", "success_criteria": "The agent says when."}, &sc)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(agentID)+"/test-runs", token, map[string]any{}, &run)
	o.scenario, o.testRun = sc.ID, run.ID
	var key struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/projects/"+itoa(projectID)+"/api-keys", token, map[string]string{"name": "ci", "role": "viewer"}, &key)
	o.apiKey = key.ID
	return o
}

// newWebhook makes a webhook endpoint (on an address the SSRF guard
// refuses at once) with one test delivery.
func newWebhook(t *testing.T, s *apptest.Server, token string, projectID int64) (webhookID, deliveryID int64) {
	t.Helper()
	wh := storeEndpoint(t, s, projectID, "https://127.0.0.1:9/hook")
	var d struct{ ID int64 }
	s.Must(t, 202, "POST", "/api/webhooks/"+itoa(wh.ID)+"/test", token, nil, &d)
	return wh.ID, d.ID
}

var phoneSeq atomic.Int64

// newTenants copies base with a fresh project, agent and viewer of
// base.ownerID, so that a route's deletes do not take objects from the next
// route.
func newTenants(t *testing.T, s *apptest.Server, base tenants) tenants {
	t.Helper()
	f := base
	tok := s.Token(t, base.ownerID)
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "mine"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "mine"}, &a)
	s.Join(t, tok, p.ID, base.memberTok, base.memberEmail, agentline.RoleViewer)
	f.ownProject, f.ownAgent, f.ownMember = p.ID, a.ID, base.memberID
	f.own = newObjects(t, s, tok, p.ID, a.ID)
	return f
}

// Ids that name nothing: not numbers, not positive, too large, too long.
var badIDs = []string{"abc", "-1", "0", "99999999999999999999", strings.Repeat("9", 5000)}

// Bodies every route must survive. tooLarge is over the 1 MiB default limit.
var (
	tooLarge  = []byte(`{"name":"` + strings.Repeat("a", 2<<20) + `"}`)
	badBodies = []struct {
		name string
		body []byte
	}{
		{"malformed JSON", []byte(`{"name": "x",`)},
		{"wrong types", []byte(`{"name": 5, "email": [], "role": {}, "branding": "x", "model": true}`)},
		{"array", []byte(`[{"name": "x"}]`)},
		{"null", []byte(`null`)},
		{"unknown field", []byte(`{"name": "x", "no_such_field": 1}`)},
		{"empty", nil},
		{"2 MiB", tooLarge},
	}
)

// htmlRoutes answer people in a browser frame, so their errors are HTML
// pages (a 401 or 404 with a sentence), not the JSON error shape.
var htmlRoutes = map[string]bool{
	"GET /api/channels/voice/embed/{channel_id}":       true,
	"GET /api/channels/form/embed/{channel_id}":        true,
	"GET /api/channels/form/embed-widget/{channel_id}": true,
	// Single sign-on's navigations: off here, a 404 page.
	"GET /api/auth/oidc/start":    true,
	"GET /api/auth/oidc/callback": true,
}

var paramPattern = regexp.MustCompile(`\{([a-z_]+)\}`)

// Every registered route, with bad ids, another tenant's ids, no or a bad
// token and every kind of bad body, answers a 4xx (or 2xx) in the JSON error
// shape: never a 5xx, never a panic.
func TestEveryRouteSurvivesBadInput(t *testing.T) {
	t.Parallel()
	forEachDatabaseInParallel(t, func(t *testing.T, databaseURL string) {
		// Telephony on, against the fake carrier, so that its routes are
		// reached past the feature switch.
		carrier := twiliofake.New(twiliofake.Options{})
		t.Cleanup(carrier.Close)
		// The provider is a fake on loopback too: console test sessions
		// reach it past the checks.
		provider := httptest.NewServer(providerfake.New("sk-test", "g-test"))
		t.Cleanup(provider.Close)
		s := apptest.Start(t, apptest.Config(t, databaseURL, map[string]string{
			"OPENAI_BASE_URL": provider.URL, "GEMINI_BASE_URL": provider.URL, "GEMINI_API_KEY": "g-test",
			"TELEPHONY_ENABLED": "true", "BOT_HOST": "agentline.example.com", "OPENAI_API_KEY": "sk-test",
			"TWILIO_ACCOUNT_SID": carrier.AccountSID(), "TWILIO_AUTH_TOKEN": carrier.AuthToken(), "TWILIO_API_BASE_URL": carrier.URL(),
		}))
		owner, _ := s.NewUser(t, "owner@example.com")
		member, memberTok := s.NewUser(t, "member@example.com")
		outsider, outTok := s.NewUser(t, "outsider@example.com")
		var q agentline.Project
		var b agentline.Agent
		s.Must(t, 201, "POST", "/api/projects", outTok, map[string]string{"name": "other"}, &q)
		s.Must(t, 201, "POST", "/api/projects/"+itoa(q.ID)+"/agents", outTok, map[string]string{"name": "other"}, &b)
		base := tenants{ownerID: owner.ID, otherUser: outsider.ID, otherProject: q.ID, otherAgent: b.ID,
			memberID: member.ID, memberEmail: member.Email, memberTok: memberTok}
		base.other = newObjects(t, s, outTok, q.ID, b.ID)

		routes := s.App.Routes()
		if len(routes) < 17 {
			t.Fatalf("only %d routes registered: %v", len(routes), routes)
		}
		requests := 0
		for _, route := range routes {
			method, pattern, _ := strings.Cut(route, " ")
			t.Run(route, func(t *testing.T) {
				f := newTenants(t, s, base)
				anonymous := map[string]*apptest.Response{} // by variant, no token
				signedIn := map[string]*apptest.Response{}  // by variant, owner's token, body {}
				for _, v := range pathVariants(t, pattern, f) {
					send := func(token string, body []byte) *apptest.Response {
						requests++
						return serve(t, s, method, v.path, token, body)
					}
					// Without a valid token.
					for _, tok := range []string{"", "als_not-a-real-token"} {
						r := send(tok, []byte(`{}`))
						check(t, route, v.name, "token "+tok, r)
						if tok == "" {
							anonymous[v.name] = r
						}
					}
					signedIn[v.name] = send(s.Token(t, f.ownerID), []byte(`{}`))
					check(t, route, v.name, "{}", signedIn[v.name])
					// Signed in, with each bad body.
					for _, bb := range badBodies {
						r := send(s.Token(t, f.ownerID), bb.body)
						check(t, route, v.name, bb.name, r)
						// Its declared length is over the limit: a POST, PUT
						// or PATCH is refused by the edge whatever the route
						// or token (other methods read no body).
						carries := method == "POST" || method == "PUT" || method == "PATCH"
						if bb.name == "2 MiB" && carries && (r.Status != 413 || r.ErrorCode() != agentline.ETooLarge) {
							t.Errorf("%s [%s] with a 2 MiB body = %s, want 413 too_large", route, v.name, r)
						}
					}
				}
				// On a route that needs a session, another tenant's object
				// answers exactly like one that does not exist.
				if own, other := anonymous["own ids"], signedIn["other tenant's ids"]; own != nil && other != nil && own.Status == http.StatusUnauthorized {
					if unused := signedIn["unused ids"]; other.Status != unused.Status || !bytes.Equal(other.Body, unused.Body) {
						t.Errorf("%s tells another tenant's object (%s) from a missing one (%s)", route, other, unused)
					}
				}
			})
		}
		t.Logf("%d routes, %d requests", len(routes), requests)
	})
}

type pathVariant struct{ name, path string }

// pathVariants fills the route's {params}: all with own ids, all with the
// other tenant's ids, all with ids no object has, then each bad id in each
// param (the others own).
func pathVariants(t *testing.T, pattern string, f tenants) []pathVariant {
	t.Helper()
	params := paramPattern.FindAllStringSubmatch(pattern, -1)
	if len(params) == 0 {
		return []pathVariant{{"no ids", pattern}}
	}
	own, other := map[string]string{}, map[string]string{}
	for _, p := range params {
		fx, ok := paramFixtures[p[1]]
		if !ok {
			t.Fatalf("no fixture for {%s} of %s: add it to paramFixtures in robustness_test.go", p[1], pattern)
		}
		own[p[1]], other[p[1]] = fx(f)
	}
	fill := func(vals map[string]string) string {
		return paramPattern.ReplaceAllStringFunc(pattern, func(m string) string { return vals[m[1:len(m)-1]] })
	}
	unused := map[string]string{}
	for k := range own {
		unused[k] = "987654321"
	}
	out := []pathVariant{{"own ids", fill(own)}, {"other tenant's ids", fill(other)}, {"unused ids", fill(unused)}}
	for _, p := range params {
		for _, bad := range badIDs {
			vals := map[string]string{}
			for k, v := range own {
				vals[k] = v
			}
			vals[p[1]] = bad
			out = append(out, pathVariant{fmt.Sprintf("%s=%.20s", p[1], bad), fill(vals)})
		}
	}
	return out
}

// serve sends one request through the app's whole handler in process; a
// panic that escaped the edge's recovery would fail the test here.
func serve(t *testing.T, s *apptest.Server, method, path, token string, body []byte) *apptest.Response {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequestWithContext(context.Background(), method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	s.App.Handler().ServeHTTP(rec, req)
	return &apptest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// check: no 5xx; an error answer is JSON {"error":{"code","message"}} whose
// code is in httpx's table with this very status.
func check(t *testing.T, route, variant, input string, r *apptest.Response) {
	t.Helper()
	where := fmt.Sprintf("%s [%s, %.30s]", route, variant, input)
	// Every answer, pages and errors included, forbids type sniffing.
	if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s = %d with X-Content-Type-Options %q, want nosniff", where, r.Status, got)
	}
	if r.Status >= 500 {
		t.Errorf("%s = %s: a 5xx", where, r)
		return
	}
	if r.Status < 400 {
		return
	}
	if htmlRoutes[route] {
		if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || (r.Status != 401 && r.Status != 404) || !bytes.Contains(r.Body, []byte(`role="alert"`)) {
			t.Errorf("%s: want a 401 or 404 HTML page, got %s (%s)", where, r, ct)
		}
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: error answer has Content-Type %q", where, ct)
	}
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error == nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Errorf("%s: error answer not in the JSON error shape: %s", where, r)
		return
	}
	if httpx.Status(e.Error.Code) != r.Status {
		t.Errorf("%s: code %q does not map to status %d in httpx", where, e.Error.Code, r.Status)
	}
}
