package twiliofake

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// A played call goes through the statuses Twilio reports, each in a
// signed callback to the player's server (over the public URL); a call
// canceled while it rings is never answered and reports canceled.
func TestPlayReportsEachStatus(t *testing.T) {
	var mu sync.Mutex
	var got []url.Values
	var bad []string
	token := "0123456789abcdef0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		defer mu.Unlock()
		if want := Sign(token, "https://bot.example.com"+r.URL.RequestURI(), r.PostForm); r.Header.Get("X-Twilio-Signature") != want {
			bad = append(bad, r.URL.RequestURI())
		}
		got = append(got, r.PostForm)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	answered := make(chan string, 2)
	f := New(Options{AuthToken: token, Play: &Play{Server: srv.URL, Ring: 300 * time.Millisecond,
		Answer: func(ctx context.Context, c Call) error {
			answered <- c.SID
			time.Sleep(1100 * time.Millisecond) // a second of talk
			return nil
		}}})
	defer f.Close()
	client := &http.Client{}
	call := func(to string) string {
		form := url.Values{"To": {to}, "From": {"+14155550100"}, "Twiml": {"<Response/>"},
			"StatusCallback":      {"https://bot.example.com/api/telephony/status?x=1"},
			"StatusCallbackEvent": {"initiated", "ringing", "answered", "completed"}}
		req, _ := http.NewRequest("POST", f.URL()+"/2010-04-01/Accounts/"+f.AccountSID()+"/Calls.json", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(f.AccountSID(), token)
		res, err := client.Do(req)
		if err != nil || res.StatusCode != 201 {
			t.Fatalf("create call: %v %v", res, err)
		}
		res.Body.Close()
		calls := f.Calls()
		return calls[len(calls)-1].SID
	}
	statuses := func(sid string) []string {
		for range 100 {
			var out []string
			for _, c := range f.Calls() {
				if c.SID == sid {
					for _, cb := range c.Callbacks {
						out = append(out, cb.Get("CallStatus"))
					}
				}
			}
			if n := len(out); n > 0 && (out[n-1] == "completed" || out[n-1] == "canceled") {
				return out
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("call %s never ended", sid)
		return nil
	}
	buy := url.Values{"PhoneNumber": {"+14155550100"}}
	req, _ := http.NewRequest("POST", f.URL()+"/2010-04-01/Accounts/"+f.AccountSID()+"/IncomingPhoneNumbers.json", strings.NewReader(buy.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(f.AccountSID(), token)
	if res, err := client.Do(req); err != nil || res.StatusCode != 201 {
		t.Fatalf("buy: %v %v", res, err)
	}

	sid := call("+14155550123")
	if s := strings.Join(statuses(sid), " "); s != "initiated ringing in-progress completed" {
		t.Errorf("callbacks: %s", s)
	}
	if <-answered != sid {
		t.Error("Answer was not given the call")
	}
	c := f.Calls()[0]
	if last := c.Callbacks[len(c.Callbacks)-1]; last.Get("CallDuration") != "1" || last.Get("SequenceNumber") != "3" || last.Get("Direction") != "outbound-api" {
		t.Errorf("completed callback: %v", last)
	}

	sid = call("+14155550124")
	time.Sleep(250 * time.Millisecond) // ringing
	f.SetCallStatus(sid, "canceled")
	if s := strings.Join(statuses(sid), " "); s != "initiated ringing canceled" {
		t.Errorf("callbacks of a call canceled while it rang: %s", s)
	}
	select {
	case <-answered:
		t.Error("a canceled call was answered")
	case <-time.After(500 * time.Millisecond):
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 || len(got) != 7 {
		t.Errorf("%d callbacks arrived (want 7); badly signed: %v", len(got), bad)
	}
}
