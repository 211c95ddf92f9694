package telephony_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// TestSignaturesCheckedInDevelopment: with TWILIO_AUTH_TOKEN set, the
// carrier's webhooks and stream upgrades are checked outside production
// too, so a development deployment on a public host opens no model socket
// for whoever finds it.
func TestSignaturesCheckedInDevelopment(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil) // development, with a carrier token
	ctx := testCtx(t)
	sid := e.fake.IncomingCall("+14155550199", e.number)
	form := url.Values{"CallSid": {sid}, "From": {"+14155550199"}, "To": {e.number}}
	wrong := "0123456789abcdef0123456789abcdef"
	for _, path := range []string{"/api/telephony/inbound", "/api/telephony/status"} {
		for name, sig := range map[string]string{
			"unsigned":     "",
			"wrong token":  twiliofake.Sign(wrong, "https://"+botHost+path, form),
			"wrong URL":    twiliofake.Sign(e.fake.AuthToken(), e.srv.URL+path, form),
			"wrong params": twiliofake.Sign(e.fake.AuthToken(), "https://"+botHost+path, url.Values{"CallSid": {sid}}),
		} {
			req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if sig != "" {
				req.Header.Set("X-Twilio-Signature", sig)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s: %d, want 403", path, name, res.StatusCode)
			}
		}
	}
	doc := e.postForm("/api/telephony/inbound", form, e.fake.AuthToken())
	s, err := callsim.ParseTwiML(string(doc.body))
	if err != nil {
		t.Fatalf("%v: %s", err, doc.body)
	}
	for name, sig := range map[string]string{
		"unsigned":    "",
		"wrong token": twiliofake.Sign(wrong, s.URL, url.Values{}),
	} {
		_, err := callsim.Open(ctx, s, callsim.Options{Server: e.srv.URL, CallSID: sid, Header: http.Header{"X-Twilio-Signature": {sig}}})
		if err == nil || !strings.Contains(err.Error(), "403") {
			t.Errorf("stream upgrade %s: %v, want 403", name, err)
		}
	}
	if n := e.model.Count(); n != 0 {
		t.Fatalf("%d model sockets opened for unsigned requests", n)
	}
}

// TestSkipCarrierSignatures: the explicit development switch lets unsigned
// requests through.
func TestSkipCarrierSignatures(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, map[string]string{"AGENTLINE_SKIP_CARRIER_SIGNATURES": "true"})
	sid := e.fake.IncomingCall("+14155550199", e.number)
	res := e.postForm("/api/telephony/inbound", url.Values{"CallSid": {sid}, "From": {"+14155550199"}, "To": {e.number}}, "")
	if res.status != http.StatusOK {
		t.Fatalf("unsigned inbound with checks skipped: %d %s", res.status, res.body)
	}
}
