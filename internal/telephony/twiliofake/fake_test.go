package twiliofake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The fake refuses what the real API refuses, with Twilio's error shape.
func TestFakeChecksRequests(t *testing.T) {
	f := New(Options{})
	defer f.Close()
	base := "/2010-04-01/Accounts/" + f.AccountSID()
	send := func(method, path, user, pass string, form url.Values) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, f.URL()+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(user, pass)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}
	sid, tok := f.AccountSID(), f.AuthToken()
	if code, body := send("POST", base+"/IncomingPhoneNumbers.json", sid, tok, url.Values{"PhoneNumber": {"+14155550100"}, "VoiceUrl": {"https://bot.example.com/in"}}); code != 201 || !strings.HasPrefix(body["sid"].(string), "PN") {
		t.Fatalf("buy: %d %v", code, body)
	}
	long := strings.Repeat("x", 4001)
	cases := []struct {
		name, method, path, user, pass string
		form                           url.Values
		status                         int
		code                           float64
	}{
		{"wrong token", "GET", base + "/AvailablePhoneNumbers/US/Local.json", sid, "nope", nil, 401, 20003},
		{"other account", "GET", "/2010-04-01/Accounts/AC0/AvailablePhoneNumbers/US/Local.json", sid, tok, nil, 404, 20404},
		{"bad area code", "GET", base + "/AvailablePhoneNumbers/US/Local.json?AreaCode=41", sid, tok, nil, 400, 21452},
		{"buy without number", "POST", base + "/IncomingPhoneNumbers.json", sid, tok, url.Values{}, 400, 21450},
		{"buy a bad number", "POST", base + "/IncomingPhoneNumbers.json", sid, tok, url.Values{"PhoneNumber": {"415"}}, 400, 21421},
		{"buy an owned number", "POST", base + "/IncomingPhoneNumbers.json", sid, tok, url.Values{"PhoneNumber": {"+14155550100"}}, 400, 21422},
		{"buy with a bad webhook", "POST", base + "/IncomingPhoneNumbers.json", sid, tok, url.Values{"PhoneNumber": {"+14155550101"}, "VoiceUrl": {"ftp://x"}}, 400, 21502},
		{"call without To", "POST", base + "/Calls.json", sid, tok, url.Values{"From": {"+14155550100"}, "Twiml": {"<Response/>"}}, 400, 21201},
		{"call a bad To", "POST", base + "/Calls.json", sid, tok, url.Values{"To": {"555"}, "From": {"+14155550100"}, "Twiml": {"<Response/>"}}, 400, 21211},
		{"call without From", "POST", base + "/Calls.json", sid, tok, url.Values{"To": {"+14155550123"}, "Twiml": {"<Response/>"}}, 400, 21213},
		{"call without TwiML", "POST", base + "/Calls.json", sid, tok, url.Values{"To": {"+14155550123"}, "From": {"+14155550100"}}, 400, 21205},
		{"call with long TwiML", "POST", base + "/Calls.json", sid, tok, url.Values{"To": {"+14155550123"}, "From": {"+14155550100"}, "Twiml": {long}}, 400, 13232},
		{"call from a number not owned", "POST", base + "/Calls.json", sid, tok, url.Values{"To": {"+14155550123"}, "From": {"+14155550199"}, "Twiml": {"<Response/>"}}, 400, 21210},
		{"call with a bad event", "POST", base + "/Calls.json", sid, tok, url.Values{"To": {"+14155550123"}, "From": {"+14155550100"}, "Twiml": {"<Response/>"}, "StatusCallbackEvent": {"hungup"}}, 400, 21626},
		{"update an unknown call", "POST", base + "/Calls/CA0.json", sid, tok, url.Values{"Status": {"completed"}}, 404, 20404},
		{"release an unknown number", "DELETE", base + "/IncomingPhoneNumbers/PN0.json", sid, tok, nil, 404, 20404},
	}
	for _, c := range cases {
		code, body := send(c.method, c.path, c.user, c.pass, c.form)
		if code != c.status || body["code"] != c.code || body["message"] == "" || body["more_info"] == nil {
			t.Errorf("%s: %d %v, want %d code %v", c.name, code, body, c.status, c.code)
		}
	}
	if len(f.Calls()) != 0 || len(f.Numbers()) != 1 {
		t.Fatalf("refused requests changed state: %d calls, %d numbers", len(f.Calls()), len(f.Numbers()))
	}
}
