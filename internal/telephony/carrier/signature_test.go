package carrier

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// The vector of reference/phone.md section 3 (Twilio's documented example).
var vectorForm = url.Values{
	"CallSid": {"CA1234567890ABCDE"}, "Caller": {"+14158675310"}, "Digits": {"1234"},
	"From": {"+14158675310"}, "To": {"+18005551212"},
}

const vectorSignature = "L/OH5YylLD5NRKLltdqwSvS0BnU="

func TestSignVector(t *testing.T) {
	if got := twiliofake.Sign("12345", "https://example.com/myapp.php?foo=1&bar=2", vectorForm); got != vectorSignature {
		t.Fatalf("Sign = %s, want %s", got, vectorSignature)
	}
}

func TestSignaturesValid(t *testing.T) {
	tampered := url.Values{}
	for k, v := range vectorForm {
		tampered[k] = v
	}
	tampered.Set("Digits", "1235")
	cases := []struct {
		name, token, host, target string
		form                      url.Values
		sig                       string
		want                      bool
	}{
		{"valid", "12345", "example.com", "/myapp.php?foo=1&bar=2", vectorForm, vectorSignature, true},
		{"tampered parameter", "12345", "example.com", "/myapp.php?foo=1&bar=2", tampered, vectorSignature, false},
		{"wrong URL: query", "12345", "example.com", "/myapp.php?foo=1&bar=3", vectorForm, vectorSignature, false},
		{"wrong URL: host", "12345", "evil.example.com", "/myapp.php?foo=1&bar=2", vectorForm, vectorSignature, false},
		{"wrong token", "54321", "example.com", "/myapp.php?foo=1&bar=2", vectorForm, vectorSignature, false},
		{"no signature", "12345", "example.com", "/myapp.php?foo=1&bar=2", vectorForm, "", false},
		{"no BOT_HOST", "12345", "", "/myapp.php?foo=1&bar=2", vectorForm, vectorSignature, false},
		{"no token: an empty key signs nothing", "", "example.com", "/myapp.php?foo=1&bar=2", vectorForm, twiliofake.Sign("", "https://example.com/myapp.php?foo=1&bar=2", vectorForm), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://internal:8080"+c.target, strings.NewReader(c.form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if c.sig != "" {
				r.Header.Set("X-Twilio-Signature", c.sig)
			}
			if err := r.ParseForm(); err != nil {
				t.Fatal(err)
			}
			if got := NewSignatures(c.token, c.host, false).Valid(r); got != c.want {
				t.Fatalf("Valid = %v, want %v", got, c.want)
			}
		})
	}
}

func TestSignaturesSkippedOnlyWhenAsked(t *testing.T) {
	ok := func(w http.ResponseWriter, r *http.Request) error { w.WriteHeader(http.StatusNoContent); return nil }
	for _, skip := range []bool{false, true} {
		r := httptest.NewRequest("POST", "/api/telephony/status", strings.NewReader("CallSid=CA1"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		s := NewSignatures("tok", "bot.example.com", skip)
		err := s.Check(ok)(w, r)
		if !skip && (err == nil || !strings.Contains(err.Error(), "forbidden")) {
			t.Fatalf("checked, unsigned: err = %v", err)
		}
		if skip && (err != nil || w.Code != http.StatusNoContent) {
			t.Fatalf("skipped: err = %v, status %d", err, w.Code)
		}
		up := httptest.NewRequest("GET", "/api/telephony/stream/1", nil)
		if err := s.CheckUpgrade(up); (err == nil) != skip {
			t.Fatalf("skip=%v: unsigned upgrade: err = %v", skip, err)
		}
	}
}

// BenchmarkSignatureValid measures checking one signed status callback.
func BenchmarkSignatureValid(b *testing.B) {
	s := NewSignatures("12345", "example.com", false)
	r := httptest.NewRequest("POST", "/myapp.php?foo=1&bar=2", strings.NewReader(vectorForm.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("X-Twilio-Signature", vectorSignature)
	if err := r.ParseForm(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if !s.Valid(r) {
			b.Fatal("invalid")
		}
	}
}

// TestSignatureMismatchSaysWhatWasExpected: a 403 names the URL the
// signature must cover and the setting that decides it (before, a
// simulator signing for another host got a message naming neither).
func TestSignatureMismatchSaysWhatWasExpected(t *testing.T) {
	ok := func(w http.ResponseWriter, r *http.Request) error { return nil }
	form := url.Values{"CallSid": {"CA1"}, "To": {"+14155550100"}}
	post := func(sig string) *http.Request {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8080/api/telephony/inbound?x=1", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if sig != "" {
			r.Header.Set("X-Twilio-Signature", sig)
		}
		return r
	}
	otherHost := twiliofake.Sign("tok", "https://127.0.0.1:8080/api/telephony/inbound?x=1", form)
	for _, c := range []struct {
		name, token, host, sig string
		want                   []string
	}{
		{"signed for another host", "tok", "localhost", otherHost,
			[]string{`"https://localhost/api/telephony/inbound?x=1"`, "BOT_HOST", "--bot-host", "TWILIO_AUTH_TOKEN"}},
		{"no signature", "tok", "localhost", "", []string{"no X-Twilio-Signature", `"https://localhost/api/telephony/inbound?x=1"`}},
		{"no BOT_HOST", "tok", "", otherHost, []string{"BOT_HOST is not set"}},
		{"no token", "", "localhost", otherHost, []string{"TWILIO_AUTH_TOKEN is not set"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := NewSignatures(c.token, c.host, false).Check(ok)(httptest.NewRecorder(), post(c.sig))
			if err == nil || agentline.ErrorCode(err) != agentline.EForbidden {
				t.Fatalf("err = %v, want forbidden", err)
			}
			for _, w := range c.want {
				if !strings.Contains(agentline.ErrorMessage(err), w) {
					t.Errorf("message %q does not say %q", agentline.ErrorMessage(err), w)
				}
			}
		})
	}
	up := httptest.NewRequest("GET", "http://127.0.0.1:8080/api/telephony/stream/7", nil)
	up.Header.Set("X-Twilio-Signature", twiliofake.Sign("tok", "wss://127.0.0.1:8080/api/telephony/stream/7", url.Values{}))
	err := NewSignatures("tok", "localhost", false).CheckUpgrade(up)
	if msg := agentline.ErrorMessage(err); !strings.Contains(msg, `"wss://localhost/api/telephony/stream/7"`) || !strings.Contains(msg, "BOT_HOST") {
		t.Fatalf("upgrade: message %q names neither the wss:// URL nor BOT_HOST", msg)
	}
}
