package telephony_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/streamtoken"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

func TestOutboundCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"AGENTLINE_MAX_CONCURRENT_CALLS": "2"})
	n := e.provision("+14155550100", e.ada)
	out := func(agent int64) string { return fmt.Sprintf("/api/agents/%d/telephony/outbound", agent) }
	to := map[string]any{"to_number": "+14155550123"}

	res := e.do(e.editor, "POST", out(e.ada), to)
	if res.status != 201 {
		t.Fatalf("outbound: %d %s", res.status, res.body)
	}
	var got map[string]any
	res.json(&got)
	sid, _ := got["call_sid"].(string)
	if !strings.HasPrefix(sid, "CA") || got["status"] != "queued" || len(got) != 2 {
		t.Fatalf("answer = %v", got)
	}
	calls := e.fake.Calls()
	if len(calls) != 1 || calls[0].SID != sid || calls[0].From != n.PhoneNumber || calls[0].To != "+14155550123" || calls[0].URL != "" ||
		calls[0].StatusCallback != "https://"+botHost+"/api/telephony/status" || strings.Join(calls[0].StatusCallbackEvents, " ") != "initiated ringing answered completed" {
		t.Fatalf("carrier call = %+v", calls)
	}
	streamURL, params := parseStreamTwiML(t, calls[0].Twiml)
	if streamURL != fmt.Sprintf("wss://%s/api/telephony/stream/%d", botHost, e.ada) || params["direction"] != "outbound" {
		t.Fatalf("stream %q params %v", streamURL, params)
	}
	record, err := e.app.Store.Call(context.Background(), e.project, sid)
	if err != nil || record.Direction != "outbound" || record.Status != "queued" || record.AgentID != e.ada || record.From != n.PhoneNumber ||
		record.NumberID == nil || *record.NumberID != n.ID || record.StreamRef == "" || record.StreamRef != params["stream_ref"] {
		t.Fatalf("record = %+v %v", record, err)
	}
	claims, err := verifyToken(e, params["stream_token"], e.ada)
	if err != nil || claims.Ref != record.StreamRef || claims.Direction != "outbound" {
		t.Fatalf("stream token: %+v %v", claims, err)
	}

	e.run([]check{
		{name: "viewer may not call", token: e.viewer, method: "POST", path: out(e.ada), body: to, status: 403},
		{name: "outsider", token: e.outsider, method: "POST", path: out(e.ada), body: to, status: 404},
		{name: "outsider's own agent without number", token: e.outsider, method: "POST", path: out(e.eve), body: to, status: 400, has: "no phone number"},
		{name: "missing agent", token: e.owner, method: "POST", path: out(999999), body: to, status: 404},
		{name: "bad number", token: e.owner, method: "POST", path: out(e.ada), body: map[string]any{"to_number": "555-0123"}, status: 400, has: "E.164"},
		{name: "no number", token: e.owner, method: "POST", path: out(e.ada), body: map[string]any{}, status: 400, has: "to_number"},
		{name: "own number", token: e.owner, method: "POST", path: out(e.ada), body: map[string]any{"to_number": n.PhoneNumber}, status: 400},
		{name: "agent without number", token: e.owner, method: "POST", path: out(e.bob), body: to, status: 400, has: "no phone number"},
		{name: "gemini agent without number", token: e.owner, method: "POST", path: out(e.gemini), body: to, status: 400, has: "no phone number"},
	})
	// A suspended number does not call out.
	e.run([]check{
		{name: "suspend", token: e.owner, method: "PATCH", path: fmt.Sprintf("/api/projects/%d/telephony/numbers/%d", e.project, n.ID), body: map[string]any{"status": "suspended"}, status: 200},
		{name: "suspended number", token: e.owner, method: "POST", path: out(e.ada), body: to, status: 400, has: "suspended"},
		{name: "activate", token: e.owner, method: "PATCH", path: fmt.Sprintf("/api/projects/%d/telephony/numbers/%d", e.project, n.ID), body: map[string]any{"status": "active"}, status: 200},
	})
	// The carrier refuses: no call record is left.
	e.fake.FailNext(400, 21215, "Geo Permission configuration is not permitting call")
	e.run([]check{{name: "carrier refuses", token: e.owner, method: "POST", path: out(e.ada), body: to, status: 502, code: "carrier_error", has: "Geo Permission"}})
	var page struct{ Items []agentline.Call }
	e.do(e.owner, "GET", fmt.Sprintf("/api/projects/%d/telephony/calls", e.project), nil).json(&page)
	if len(page.Items) != 1 {
		t.Fatalf("calls after a refused call = %+v", page.Items)
	}
	// The cap of 2 live calls per project.
	e.run([]check{{name: "second call", token: e.owner, method: "POST", path: out(e.ada), body: to, status: 201}})
	res = e.do(e.owner, "POST", out(e.ada), to)
	if res.status != 429 || res.errorCode() != "rate_limited" || res.header.Get("Retry-After") == "" || !strings.Contains(string(res.body), "AGENTLINE_MAX_CONCURRENT_CALLS") {
		t.Fatalf("over the cap: %d %v %s", res.status, res.header, res.body)
	}
	// When a call ends, there is room again.
	if r := e.postForm("/api/telephony/status", url.Values{"CallSid": {sid}, "CallStatus": {"completed"}, "Direction": {"outbound-api"}, "CallDuration": {"3"}}, e.fake.AuthToken()); r.status != 204 {
		t.Fatalf("status callback: %d %s", r.status, r.body)
	}
	e.run([]check{{name: "room again", token: e.owner, method: "POST", path: out(e.ada), body: to, status: 201}})
}

func TestEndCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	n := e.provision("+14155550100", e.ada)
	e.provision("+14155550101", e.bob)
	var started struct {
		CallSID string `json:"call_sid"`
	}
	e.do(e.owner, "POST", fmt.Sprintf("/api/agents/%d/telephony/outbound", e.ada), map[string]any{"to_number": "+14155550123"}).json(&started)
	end := func(agent int64, sid string) string {
		return fmt.Sprintf("/api/agents/%d/telephony/calls/%s", agent, sid)
	}

	e.run([]check{
		{name: "editor may not end", token: e.editor, method: "DELETE", path: end(e.ada, started.CallSID), status: 403},
		{name: "outsider", token: e.outsider, method: "DELETE", path: end(e.ada, started.CallSID), status: 404},
		{name: "outsider through own agent", token: e.outsider, method: "DELETE", path: end(e.eve, started.CallSID), status: 404},
		{name: "another agent's call", token: e.owner, method: "DELETE", path: end(e.bob, started.CallSID), status: 404},
		{name: "unknown call", token: e.owner, method: "DELETE", path: end(e.ada, "CA00000000000000000000000000000000"), status: 404},
		{name: "malformed call sid", token: e.owner, method: "DELETE", path: end(e.ada, "pending:x"), status: 404},
		{name: "end", token: e.owner, method: "DELETE", path: end(e.ada, started.CallSID), status: 204},
		{name: "already ended", token: e.owner, method: "DELETE", path: end(e.ada, started.CallSID), status: 409, has: "already ended"},
	})
	fc := e.fake.Calls()[0]
	if len(fc.Updates) != 1 || fc.Updates[0].Get("Status") != "completed" {
		t.Fatalf("carrier updates = %+v", fc.Updates)
	}
	// It was never answered: canceled, not completed (docs/phone.md).
	rec, _ := e.app.Store.Call(context.Background(), e.project, started.CallSID)
	if rec.Status != "canceled" || rec.EndedAt == nil || rec.EndReason == "" {
		t.Fatalf("record = %+v", rec)
	}

	// An inbound call, known from its status callback and answered, ends
	// completed.
	in := e.fake.IncomingCall("+14155550199", n.PhoneNumber)
	if r := e.postForm("/api/telephony/status", url.Values{"CallSid": {in}, "CallStatus": {"in-progress"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}, e.fake.AuthToken()); r.status != 204 {
		t.Fatalf("status callback: %d %s", r.status, r.body)
	}
	e.run([]check{{name: "end inbound", token: e.owner, method: "DELETE", path: end(e.ada, in), status: 204}})
	if rec, _ := e.app.Store.Call(context.Background(), e.project, in); rec.Status != "completed" || rec.Direction != "inbound" {
		t.Fatalf("inbound record = %+v", rec)
	}
	// The carrier refuses to hang up.
	in2 := e.fake.IncomingCall("+14155550199", n.PhoneNumber)
	e.postForm("/api/telephony/status", url.Values{"CallSid": {in2}, "CallStatus": {"ringing"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}, e.fake.AuthToken())
	e.fake.FailNext(500, 20500, "cannot hang up now")
	e.run([]check{{name: "carrier failure", token: e.owner, method: "DELETE", path: end(e.ada, in2), status: 502, code: "carrier_error", has: "cannot hang up now"}})
}

func TestCallRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	n := e.provision("+14155550100", e.ada)
	e.provision("+14155550101", e.bob)
	status := func(sid, st, dir, to string, extra ...string) {
		t.Helper()
		f := url.Values{"CallSid": {sid}, "CallStatus": {st}, "Direction": {dir}, "From": {"+14155550199"}, "To": {to}, "AccountSid": {e.fake.AccountSID()}}
		for i := 0; i+1 < len(extra); i += 2 {
			f.Set(extra[i], extra[i+1])
		}
		if r := e.postForm("/api/telephony/status", f, e.fake.AuthToken()); r.status != 204 {
			t.Fatalf("status %s %s: %d %s", sid, st, r.status, r.body)
		}
	}
	a := "CA" + strings.Repeat("a", 32)
	status(a, "ringing", "inbound", n.PhoneNumber, "SequenceNumber", "0", "Timestamp", "Mon, 23 Nov 2026 10:00:00 +0000")
	status(a, "completed", "inbound", n.PhoneNumber, "SequenceNumber", "2", "Timestamp", "Mon, 23 Nov 2026 10:01:05 +0000", "CallDuration", "60")
	status(a, "in-progress", "inbound", n.PhoneNumber, "SequenceNumber", "1", "Timestamp", "Mon, 23 Nov 2026 10:00:05 +0000") // late
	b := "CA" + strings.Repeat("b", 32)
	status(b, "in-progress", "inbound", "+14155550101")
	status("CA"+strings.Repeat("c", 32), "ringing", "inbound", "+19995550000") // not our number: acknowledged, not stored

	var call agentline.Call
	res := e.do(e.viewer, "GET", "/api/calls/"+a, nil)
	res.json(&call)
	if res.status != 200 || call.Status != "completed" || call.Direction != "inbound" || call.From != "+14155550199" || call.To != n.PhoneNumber ||
		call.AgentID != e.ada || call.DurationS == nil || *call.DurationS != 60 || call.EndedAt == nil || !call.EndedAt.Equal(time.Date(2026, 11, 23, 10, 1, 5, 0, time.UTC)) {
		t.Fatalf("call = %d %+v", res.status, call)
	}
	if strings.Contains(string(res.body), "stream_ref") {
		t.Fatalf("stream_ref leaked: %s", res.body)
	}
	calls := fmt.Sprintf("/api/projects/%d/telephony/calls", e.project)
	e.run([]check{
		{name: "outsider reads a call", token: e.outsider, method: "GET", path: "/api/calls/" + a, status: 404},
		{name: "unknown call", token: e.owner, method: "GET", path: "/api/calls/CA404", status: 404},
		{name: "no session", method: "GET", path: "/api/calls/" + a, status: 401},
		{name: "outsider lists", token: e.outsider, method: "GET", path: calls, status: 404},
		{name: "outsider lists own project", token: e.outsider, method: "GET", path: fmt.Sprintf("/api/projects/%d/telephony/calls", e.otherProject), status: 200, has: `"items":[]`},
		{name: "bad status filter", token: e.owner, method: "GET", path: calls + "?status=done", status: 400, has: "status"},
		{name: "bad agent filter", token: e.owner, method: "GET", path: calls + "?agent_id=x", status: 400, has: "agent_id"},
		{name: "limit too large", token: e.owner, method: "GET", path: calls + "?limit=201", status: 400, has: "limit"},
		{name: "limit zero", token: e.owner, method: "GET", path: calls + "?limit=0", status: 400},
		{name: "bad cursor", token: e.owner, method: "GET", path: calls + "?before=-1", status: 400, has: "before"},
		{name: "unsigned status callback", method: "POST", path: "/api/telephony/status", body: "", status: 403},
	})
	if r := e.postForm("/api/telephony/status", url.Values{}, e.fake.AuthToken()); r.status != 400 {
		t.Fatalf("status callback without CallSid: %d", r.status)
	}
	if r := e.postForm("/api/telephony/status", url.Values{"CallSid": {a}, "CallStatus": {"exploded"}}, e.fake.AuthToken()); r.status != 400 {
		t.Fatalf("bad CallStatus: %d", r.status)
	}
	if r := e.postForm("/api/telephony/status", url.Values{"CallSid": {a}, "CallStatus": {"completed"}, "CallDuration": {"x"}}, e.fake.AuthToken()); r.status != 400 {
		t.Fatalf("bad CallDuration: %d", r.status)
	}

	var page struct {
		Items      []agentline.Call `json:"items"`
		NextBefore *int64           `json:"next_before"`
	}
	e.do(e.viewer, "GET", calls+"?limit=1", nil).json(&page)
	if len(page.Items) != 1 || page.Items[0].CallSID != b || page.NextBefore == nil {
		t.Fatalf("first page = %+v", page)
	}
	e.do(e.viewer, "GET", fmt.Sprintf("%s?limit=1&before=%d", calls, *page.NextBefore), nil).json(&page)
	if len(page.Items) != 1 || page.Items[0].CallSID != a || page.NextBefore == nil {
		t.Fatalf("second page = %+v", page)
	}
	e.do(e.viewer, "GET", fmt.Sprintf("%s?limit=1&before=%d", calls, *page.NextBefore), nil).json(&page)
	if len(page.Items) != 0 || page.NextBefore != nil {
		t.Fatalf("last page = %+v", page)
	}
	e.do(e.viewer, "GET", fmt.Sprintf("%s?agent_id=%d&status=in-progress", calls, e.bob), nil).json(&page)
	if len(page.Items) != 1 || page.Items[0].CallSID != b {
		t.Fatalf("filtered = %+v", page)
	}
	e.do(e.viewer, "GET", calls, nil).json(&page)
	if len(page.Items) != 2 || page.NextBefore != nil {
		t.Fatalf("all = %+v", page)
	}
}

func TestStatusCallbackSignatureInProduction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"AGENTLINE_ENV": "production"})
	n := e.provision("+14155550100", e.ada)
	sid := "CA" + strings.Repeat("d", 32)
	form := url.Values{"CallSid": {sid}, "CallStatus": {"ringing"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}
	send := func(path, sig string, f url.Values) int {
		req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if sig != "" {
			req.Header.Set("X-Twilio-Signature", sig)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	public := "https://" + botHost + "/api/telephony/status"
	tampered := url.Values{}
	for k, v := range form {
		tampered[k] = v
	}
	tampered.Set("CallStatus", "completed")
	cases := []struct {
		name string
		path string
		sig  string
		form url.Values
		want int
	}{
		{"no signature", "/api/telephony/status", "", form, 403},
		{"wrong token", "/api/telephony/status", twiliofake.Sign("not-the-token", public, form), form, 403},
		{"wrong URL: the internal address", "/api/telephony/status", twiliofake.Sign(e.fake.AuthToken(), e.srv.URL+"/api/telephony/status", form), form, 403},
		{"wrong URL: another query", "/api/telephony/status?x=1", twiliofake.Sign(e.fake.AuthToken(), public, form), form, 403},
		{"tampered parameter", "/api/telephony/status", twiliofake.Sign(e.fake.AuthToken(), public, form), tampered, 403},
		{"valid", "/api/telephony/status", twiliofake.Sign(e.fake.AuthToken(), public, form), form, 204},
		{"valid with query", "/api/telephony/status?x=1", twiliofake.Sign(e.fake.AuthToken(), public+"?x=1", tampered), tampered, 204},
	}
	for _, c := range cases {
		if got := send(c.path, c.sig, c.form); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if rec, err := e.app.Store.Call(context.Background(), e.project, sid); err != nil || rec.Status != "completed" {
		t.Fatalf("record = %+v %v", rec, err)
	}
}

// BenchmarkStatusCallback measures one carrier status callback through the
// whole HTTP stack (middleware, form parsing, the store's transaction) on
// SQLite, each creating the record of a new inbound call.
func BenchmarkStatusCallback(b *testing.B) {
	e := newEnv(b, nil)
	n := e.provision("+14155550100", e.ada)
	h := e.app.Handler()
	i := 0
	for b.Loop() {
		i++
		form := url.Values{"CallSid": {fmt.Sprintf("CA%032x", i)}, "CallStatus": {"ringing"}, "Direction": {"inbound"}, "From": {"+14155550199"}, "To": {n.PhoneNumber}}
		req := httptest.NewRequest("POST", "/api/telephony/status", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 204 {
			b.Fatalf("status %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkOutboundTwiML measures building an outbound call's stream token
// and TwiML, the work done per outbound call besides the carrier request.
func BenchmarkOutboundTwiML(b *testing.B) {
	now := time.Now()
	for b.Loop() {
		tok := streamtoken.Sign("s3cret", 42, "sr_0123456789abcdefghijkl", "outbound", now.Add(streamtoken.TTL))
		if _, err := carrier.StreamTwiML(botHost, 42, carrier.StreamParam{Name: "direction", Value: "outbound"},
			carrier.StreamParam{Name: "stream_token", Value: tok}, carrier.StreamParam{Name: "stream_ref", Value: "sr_0123456789abcdefghijkl"}); err != nil {
			b.Fatal(err)
		}
	}
}
