package telephony_test

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzInboundWebhookForm posts form bodies to the carrier's two webhooks
// through the whole app (routing, body limits, form parsing, the handlers,
// the store): every body gets a clean answer, never a 5xx or a panic: the
// inbound webhook answers TwiML or a JSON error, the status callback 204 or
// a JSON error.
func FuzzInboundWebhookForm(f *testing.F) {
	e := newEnv(f, nil)
	n := e.provision("+14155550100", e.ada)
	sid := "CA0123456789abcdef0123456789abcdef"
	for _, seed := range []struct {
		status bool
		body   string
	}{
		{false, "CallSid=" + sid + "&From=%2B14155550199&To=" + strings.ReplaceAll(n.PhoneNumber, "+", "%2B") + "&CallStatus=ringing&Direction=inbound&AccountSid=AC1"},
		{false, "CallSid=" + sid + "&From=%2B14155550199&To=%2B14155550111"},
		{false, "CallSid=CA1&To=%2B1"},
		{false, "CallSid=" + sid + "&To=" + strings.ReplaceAll(n.PhoneNumber, "+", "%2B") + "&CallStatus=bogus&CallStatus=completed"},
		{true, "CallSid=" + sid + "&CallStatus=completed&CallDuration=61&Direction=inbound&Timestamp=Mon%2C+23+Nov+2026+10%3A00%3A00+%2B0000&SequenceNumber=3"},
		{true, "CallSid=" + sid + "&CallStatus=in-progress&CallDuration=-1"},
		{true, "CallSid=" + sid + "&CallStatus=completed&CallDuration=99999999999999999999"},
		{true, "CallSid=CAzz&CallStatus=ringing"},
		{true, "%zz=1&;;&&=="},
		{false, ""},
	} {
		f.Add(seed.status, seed.body)
	}
	h := e.app.Handler()
	f.Fuzz(func(t *testing.T, status bool, body string) {
		path := "/api/telephony/inbound"
		if status {
			path = "/api/telephony/status"
		}
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		switch {
		case res.StatusCode >= 500:
			t.Fatalf("%s %q = %d %s", path, body, res.StatusCode, rec.Body)
		case res.StatusCode >= 400:
			var e struct {
				Error struct{ Code, Message string }
			}
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%s %q = %d with no JSON error: %s", path, body, res.StatusCode, rec.Body)
			}
		case status && res.StatusCode != http.StatusNoContent:
			t.Fatalf("status callback %q = %d %s", body, res.StatusCode, rec.Body)
		case !status:
			var doc struct {
				XMLName xml.Name
			}
			if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/xml") ||
				xml.Unmarshal(rec.Body.Bytes(), &doc) != nil || doc.XMLName.Local != "Response" {
				t.Fatalf("inbound %q = %d %s %s", body, res.StatusCode, res.Header.Get("Content-Type"), rec.Body)
			}
		}
	})
}
