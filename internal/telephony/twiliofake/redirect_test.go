package twiliofake

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// A played call whose TwiML is replaced with a <Say> and a <Hangup/> ends
// its stream (Answer's ctx), speaks the text (Said) and ends completed,
// as Twilio runs a redirected call.
func TestPlayRunsARedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	streamEnded := make(chan struct{})
	answered := make(chan string, 1)
	f := New(Options{Play: &Play{Server: srv.URL, Ring: 100 * time.Millisecond, Answer: func(ctx context.Context, c Call) error {
		answered <- c.SID
		<-ctx.Done() // the callee would talk on for ever
		close(streamEnded)
		return nil
	}}})
	defer f.Close()
	post := func(path string, form url.Values) {
		t.Helper()
		req, _ := http.NewRequest("POST", f.URL()+"/2010-04-01/Accounts/"+f.AccountSID()+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(f.AccountSID(), f.AuthToken())
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode >= 300 {
			t.Fatalf("POST %s: %v %v", path, res, err)
		}
		res.Body.Close()
	}
	post("/IncomingPhoneNumbers.json", url.Values{"PhoneNumber": {"+14155550100"}})
	post("/Calls.json", url.Values{"To": {"+14155550127"}, "From": {"+14155550100"}, "Twiml": {"<Response><Connect/></Response>"}})
	sid := <-answered
	post("/Calls/"+sid+".json", url.Values{"Twiml": {"<Response><Say>Please call us back.</Say><Hangup/></Response>"}})
	select {
	case <-streamEnded:
	case <-time.After(5 * time.Second):
		t.Fatal("the redirect did not end the stream")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c := f.Calls()[0]
		if c.Status == "completed" {
			if !slices.Equal(c.Said, []string{"Please call us back."}) || c.Ended.Sub(c.Started) < SayTime {
				t.Fatalf("redirected call %+v", c)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redirected call did not end: %+v", c)
		}
	}
}
