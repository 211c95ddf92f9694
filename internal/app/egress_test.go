package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/egress/egresstest"
	"github.com/agentline/agentline/internal/store"
)

// hostPort is ip as a URL's host, in brackets when IPv6, with port.
func hostPort(ip string, port int) string {
	return net.JoinHostPort(ip, fmt.Sprint(port))
}

// egressSite is a running app with private webhooks not allowed (the
// default), an owner, a project, an agent and a form channel.
type egressSite struct {
	s       *apptest.Server
	tok     string
	project agentline.Project
	agent   agentline.Agent
	form    agentline.Channel
}

func newEgressSite(t *testing.T) egressSite {
	t.Helper()
	e := egressSite{s: apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_FORM_SUBMITS_PER_MINUTE": "1000"})}
	_, e.tok = e.s.NewUser(t, "owner@example.com")
	e.s.Must(t, 201, "POST", "/api/projects", e.tok, map[string]string{"name": "Shop"}, &e.project)
	e.s.Must(t, 201, "POST", "/api/projects/"+itoa(e.project.ID)+"/agents", e.tok, map[string]string{"name": "Ada"}, &e.agent)
	e.s.Must(t, 201, "POST", "/api/projects/"+itoa(e.project.ID)+"/channels", e.tok, map[string]any{"type": "form", "name": "Contact"}, &e.form)
	return e
}

// save sends, for each kind of outgoing request, the request that saves
// host as its URL's host, and returns the answers by kind.
func (e egressSite) save(t *testing.T, host string, n int) map[string]*apptest.Response {
	t.Helper()
	return map[string]*apptest.Response{
		"url": e.s.Do(t, "POST", "/api/agents/"+itoa(e.agent.ID)+"/tools", e.tok,
			map[string]any{"name": fmt.Sprintf("tool_%d", n), "url": "http://" + host + "/hook"}),
		"settings.form.notify_url": e.s.Do(t, "PATCH", "/api/channels/"+itoa(e.form.ID), e.tok,
			map[string]any{"settings": map[string]any{"form": map[string]any{"notify_url": "http://" + host + "/leads"}}}),
		"webhook url": e.s.Do(t, "POST", "/api/projects/"+itoa(e.project.ID)+"/webhooks", e.tok,
			map[string]any{"url": "https://" + host + "/hook"}),
	}
}

// Saving a webhook tool, a form's notify_url or an event webhook endpoint
// whose host is an address of any range of the outgoing address policy (or
// localhost) is a 400 that names the field and the setting that would
// allow it; IPv4 shorthands are refused too, public addresses saved.
func TestSavedURLsFollowTheAddressPolicy(t *testing.T) {
	t.Parallel()
	e := newEgressSite(t)
	var hosts []string
	for _, c := range egresstest.Refused() {
		hosts = append(hosts, hostPort(c.Addr, 8080))
	}
	hosts = append(hosts, "localhost:8080", "hooks.localhost", "[fe80::1%25eth0]:8080")
	n := 0
	for _, host := range hosts {
		n++
		for kind, r := range e.save(t, host, n) {
			var body struct {
				Error struct{ Code, Message, Field string }
			}
			r.JSON(t, &body)
			field := strings.TrimPrefix(kind, "webhook ")
			if r.Status != 400 || body.Error.Code != "invalid_request" || body.Error.Field != field ||
				!strings.Contains(body.Error.Message, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS=true") {
				t.Errorf("%s at %s: %s", kind, host, r)
			}
		}
	}
	for _, host := range []string{"2130706433", "0x7f.1", "0177.0.0.1", "127.1"} {
		n++
		for kind, r := range e.save(t, host, n) {
			if r.Status != 400 || r.ErrorCode() != "invalid_request" || !strings.Contains(r.String(), "shorthand") {
				t.Errorf("%s at %s: %s", kind, host, r)
			}
		}
	}
	for _, c := range egresstest.Allowed() {
		n++
		for kind, r := range e.save(t, hostPort(c.Addr, 443), n) {
			if r.Status != 200 && r.Status != 201 {
				t.Errorf("%s at %s (%s): %s", kind, c.Addr, c.Name, r)
			}
		}
	}
}

// The running app's three senders are guarded at connect time: a webhook
// tool, a notify_url and an event endpoint stored at the loopback
// receiver's address (as saved before the policy, or by a name that came
// to point there) are refused before connecting and recorded as blocked.
// Every range is shown per sender in the tools, form and webhooks
// packages; this shows the app hands each sender the guarded client.
func TestOutgoingRequestsGuardedAtConnectTime(t *testing.T) {
	t.Parallel()
	url, hooked := webhookTool(t, `{"ok":true}`, 10)
	port := netip.MustParseAddrPort(strings.TrimPrefix(url, "http://")).Port()
	e := newEgressSite(t)
	ctx := context.Background()

	// A webhook tool, at the IPv4-mapped form of the receiver's address.
	if _, err := e.s.App.Store.CreateTool(ctx, agentline.WebhookTool{ProjectID: e.project.ID, AgentID: e.agent.ID, Name: "lookup",
		URL: "http://" + hostPort("::ffff:127.0.0.1", int(port)) + "/x", Method: "POST", TimeoutMS: 2000,
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}); err != nil {
		t.Fatal(err)
	}
	res, err := e.s.App.Tools.Execute(ctx, e.agent, agentline.ToolCall{CallID: "c1", Name: "lookup", Arguments: json.RawMessage(`{}`)})
	if err != nil || !strings.Contains(res.Output, `"code":"blocked_address"`) {
		t.Errorf("tool call: %+v %v", res, err)
	}

	// An event endpoint.
	wh := storeEndpoint(t, e.s, e.project.ID, url+"/hook")
	var d struct{ ID int64 }
	e.s.Must(t, 202, "POST", "/api/webhooks/"+itoa(wh.ID)+"/test", e.tok, nil, &d)
	var del struct {
		Attempts []struct{ Error string }
	}
	waitFor(t, func() bool { // the event's first attempt
		e.s.Must(t, 200, "GET", "/api/webhooks/"+itoa(wh.ID)+"/deliveries/"+itoa(d.ID), e.tok, nil, &del)
		return len(del.Attempts) > 0
	})
	if got := del.Attempts[0].Error; !strings.HasPrefix(got, "blocked: 127.0.0.1 is a loopback address") {
		t.Errorf("event attempt error %q", got)
	}

	// A form's notify_url: the lead is stored, its delivery job fails as
	// blocked.
	e.form.Settings.Form.NotifyURL = url + "/leads"
	if _, err := e.s.App.Store.UpdateChannel(ctx, e.form); err != nil {
		t.Fatal(err)
	}
	e.s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(e.form.ID), "", map[string]string{"name": "Bo", "email": "bo@example.com"}, nil)
	var state string
	var jobErrors []byte
	waitFor(t, func() bool { // the notify job's first attempt, failed or not
		err := e.s.App.Store.JobPool().QueryRowContext(ctx, `SELECT state, errors FROM river_job WHERE kind = 'form_notify'`).Scan(&state, &jobErrors)
		return err == nil && (len(jobErrors) > 0 || state == "completed")
	})
	if !strings.Contains(string(jobErrors), "blocked: 127.0.0.1 is a loopback address") {
		t.Errorf("notify job %s, errors %s", state, jobErrors)
	}
	if len(hooked) != 0 {
		t.Errorf("the receiver got %d requests", len(hooked))
	}
}
