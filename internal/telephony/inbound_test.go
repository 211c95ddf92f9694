package telephony_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

func TestInboundWebhook(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	active := e.provision("+14155550100", e.ada)
	suspended := e.provision("+14155550101", e.bob)
	if res := e.do(e.owner, "PATCH", "/api/projects/"+itoa(e.project)+"/telephony/numbers/"+itoa(suspended.ID), map[string]any{"status": "suspended"}); res.status != 200 {
		t.Fatalf("suspend: %d %s", res.status, res.body)
	}
	unassigned := e.provision("+14155550102", e.agent(e.project, "Cy", "gpt-realtime"))
	if res := e.do(e.owner, "PATCH", "/api/projects/"+itoa(e.project)+"/telephony/numbers/"+itoa(unassigned.ID), map[string]any{"status": "unassigned"}); res.status != 200 {
		t.Fatalf("unassign: %d %s", res.status, res.body)
	}
	sid := "CA" + strings.Repeat("a", 32)
	form := func(to string) url.Values {
		return url.Values{"CallSid": {sid}, "From": {"+14155550199"}, "To": {to}, "CallStatus": {"ringing"}, "Direction": {"inbound"}}
	}
	for _, c := range []struct {
		name, to string
	}{{"unknown number", "+14155559999"}, {"suspended number", suspended.PhoneNumber}, {"unassigned number", unassigned.PhoneNumber}} {
		res := e.postForm("/api/telephony/inbound", form(c.to), e.fake.AuthToken())
		if res.status != 200 || !strings.Contains(string(res.body), "<Say>The number you have called is not in service. Goodbye.</Say><Hangup/>") ||
			strings.Contains(string(res.body), "<Connect>") || res.header.Get("Content-Type") != "text/xml; charset=utf-8" {
			t.Errorf("%s: %d %s", c.name, res.status, res.body)
		}
	}
	for _, c := range []struct {
		name string
		form url.Values
	}{
		{"no CallSid", url.Values{"To": {active.PhoneNumber}}},
		{"bad To", url.Values{"CallSid": {sid}, "To": {"555"}}},
	} {
		if res := e.postForm("/api/telephony/inbound", c.form, e.fake.AuthToken()); res.status != 400 || res.errorCode() != "invalid_request" {
			t.Errorf("%s: %d %s", c.name, res.status, res.body)
		}
	}

	res := e.postForm("/api/telephony/inbound", form(active.PhoneNumber), e.fake.AuthToken())
	if res.status != 200 || !strings.HasSuffix(string(res.body), "</Connect><Hangup/></Response>") {
		t.Fatalf("active: %d %s", res.status, res.body)
	}
	s, err := callsim.ParseTwiML(string(res.body))
	if err != nil {
		t.Fatal(err)
	}
	if s.URL != carrier.StreamURL(botHost, e.ada) || s.Params["call_sid"] != sid || s.Params["direction"] != "inbound" {
		t.Fatalf("stream = %+v", s)
	}
	claims, err := verifyToken(e, s.Params["stream_token"], e.ada)
	if err != nil || claims.Ref != sid || claims.Direction != "inbound" || time.Until(time.Unix(claims.Expires, 0)) > streamtoken.TTL {
		t.Fatalf("token claims %+v, %v", claims, err)
	}
	call, err := e.app.Store.Call(context.Background(), e.project, sid)
	if err != nil || call.AgentID != e.ada || call.Direction != "inbound" || call.Status != agentline.CallRinging || call.From != "+14155550199" {
		t.Fatalf("record = %+v, %v", call, err)
	}
}

func TestInboundWebhookDisabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"TELEPHONY_ENABLED": "false"})
	res := e.postForm("/api/telephony/inbound", url.Values{"CallSid": {"CA1"}, "To": {"+14155550100"}}, e.fake.AuthToken())
	if res.status != 404 {
		t.Fatalf("%d %s", res.status, res.body)
	}
	if res := e.do("", "GET", "/api/telephony/stream/1", nil); res.status != 404 {
		t.Fatalf("stream: %d %s", res.status, res.body)
	}
}

func TestInboundSignatureInProduction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"AGENTLINE_ENV": "production"})
	n := e.provision("+14155550100", e.ada)
	form := url.Values{"CallSid": {"CA" + strings.Repeat("b", 32)}, "CallStatus": {"ringing"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}
	tampered := url.Values{}
	for k, v := range form {
		tampered[k] = v
	}
	tampered.Set("From", "+14155550666")
	public := "https://" + botHost + "/api/telephony/inbound"
	token := e.fake.AuthToken()
	for _, c := range []struct {
		name string
		sig  string
		form url.Values
		want int
	}{
		{"valid", twiliofake.Sign(token, public, form), form, 200},
		{"no signature", "", form, 403},
		{"tampered parameter", twiliofake.Sign(token, public, form), tampered, 403},
		{"wrong URL", twiliofake.Sign(token, e.srv.URL+"/api/telephony/inbound", form), form, 403},
		{"wrong URL: http", twiliofake.Sign(token, "http://"+botHost+"/api/telephony/inbound", form), form, 403},
		{"wrong token", twiliofake.Sign("0123456789abcdef0123456789abcdef", public, form), form, 403},
	} {
		req, _ := http.NewRequest("POST", e.srv.URL+"/api/telephony/inbound", strings.NewReader(c.form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if c.sig != "" {
			req.Header.Set("X-Twilio-Signature", c.sig)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, res.StatusCode, c.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
