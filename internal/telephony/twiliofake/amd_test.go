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

// The last digit of the number called decides who answers a played call:
// 7 an answering machine, 8 a busy line, 9 nobody, anything else a person.
// Busy and unanswered calls end with Twilio's statuses, never in progress;
// answered calls that asked for machine detection get its verdict, signed
// like every callback, at the AsyncAmdStatusCallback URL, and it is on the
// call resource too.
func TestPlayByLastDigit(t *testing.T) {
	t.Parallel()
	token := "0123456789abcdef0123456789abcdef"
	var mu sync.Mutex
	amd := map[string]url.Values{} // CallSid -> verdict
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		defer mu.Unlock()
		if want := Sign(token, "https://bot.example.com"+r.URL.RequestURI(), r.PostForm); r.Header.Get("X-Twilio-Signature") != want {
			bad = append(bad, r.URL.RequestURI())
		}
		if r.URL.Path == "/amd" {
			amd[r.PostForm.Get("CallSid")] = r.PostForm
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	f := New(Options{AuthToken: token, Play: &Play{Server: srv.URL, Ring: 200 * time.Millisecond, NoAnswer: 500 * time.Millisecond,
		Answer: func(ctx context.Context, c Call) error {
			select { // long enough for the verdict after a machine's beep
			case <-ctx.Done():
			case <-time.After(MachineGreeting + MachineBeep + time.Second):
			}
			return nil
		}}})
	defer f.Close()
	post(t, f, "IncomingPhoneNumbers.json", url.Values{"PhoneNumber": {"+14155550100"}})

	cases := []struct {
		to, mode   string
		pickup     Pickup
		statuses   string
		answeredBy string
	}{
		{"+14155550127", "DetectMessageEnd", PickupMachine, "initiated ringing in-progress completed", "machine_end_beep"},
		{"+14155550137", "Enable", PickupMachine, "initiated ringing in-progress completed", "machine_start"},
		{"+14155550123", "Enable", PickupPerson, "initiated ringing in-progress completed", "human"},
		{"+14155550128", "Enable", PickupBusy, "initiated busy", ""},
		{"+14155550129", "Enable", PickupNoAnswer, "initiated ringing no-answer", ""},
		{"+14155550147", "", PickupMachine, "initiated ringing in-progress completed", ""},
	}
	sids := make([]string, len(cases))
	for i, c := range cases {
		form := url.Values{"To": {c.to}, "From": {"+14155550100"}, "Twiml": {"<Response/>"},
			"StatusCallback":      {"https://bot.example.com/status"},
			"StatusCallbackEvent": {"initiated", "ringing", "answered", "completed"}}
		if c.mode != "" {
			form.Set("MachineDetection", c.mode)
			form.Set("AsyncAmd", "true")
			form.Set("AsyncAmdStatusCallback", "https://bot.example.com/amd")
		}
		post(t, f, "Calls.json", form)
		calls := f.Calls()
		sids[i] = calls[len(calls)-1].SID
	}
	for i, c := range cases {
		call := waitEnded(t, f, sids[i])
		var got []string
		for _, cb := range call.Callbacks {
			got = append(got, cb.Get("CallStatus"))
		}
		if strings.Join(got, " ") != c.statuses || call.Pickup != c.pickup || call.AnsweredBy != c.answeredBy {
			t.Errorf("%s: callbacks %v, pickup %s, answered by %q; want %s, %s, %q", c.to, got, call.Pickup, call.AnsweredBy, c.statuses, c.pickup, c.answeredBy)
		}
		if (c.statuses != "initiated ringing in-progress completed") != call.Started.IsZero() {
			t.Errorf("%s: started %v", c.to, call.Started)
		}
		if c.mode != "" && (call.MachineDetection != c.mode || call.AsyncAmd != "true" ||
			call.AsyncAmdStatusCallback != "https://bot.example.com/amd" || call.AsyncAmdStatusCallbackMethod != "POST") {
			t.Errorf("%s: machine detection recorded as %q %q %q %q", c.to, call.MachineDetection, call.AsyncAmd, call.AsyncAmdStatusCallback, call.AsyncAmdStatusCallbackMethod)
		}
		mu.Lock()
		v, posted := amd[sids[i]]
		mu.Unlock()
		if posted != (c.answeredBy != "") || posted != (len(call.AMDCallbacks) == 1) {
			t.Errorf("%s: verdict posted %v (%v), %d recorded; want %q", c.to, posted, v, len(call.AMDCallbacks), c.answeredBy)
		}
		if posted && (v.Get("AnsweredBy") != c.answeredBy || v.Get("AccountSid") != f.AccountSID() || v.Get("MachineDetectionDuration") == "") {
			t.Errorf("%s: verdict %v", c.to, v)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("badly signed: %v", bad)
	}
}

// Machine detection parameters Twilio would refuse are refused.
func TestCreateCallRefusesBadMachineDetection(t *testing.T) {
	t.Parallel()
	f := New(Options{})
	defer f.Close()
	post(t, f, "IncomingPhoneNumbers.json", url.Values{"PhoneNumber": {"+14155550100"}})
	for _, bad := range []url.Values{{"MachineDetection": {"Yes"}}, {"AsyncAmd": {"maybe"}}, {"AsyncAmdStatusCallback": {"not a url"}}, {"AsyncAmdStatusCallbackMethod": {"PUT"}}} {
		form := url.Values{"To": {"+14155550123"}, "From": {"+14155550100"}, "Twiml": {"<Response/>"}}
		for k, v := range bad {
			form[k] = v
		}
		if status := send(t, f, "Calls.json", form); status != http.StatusBadRequest {
			t.Errorf("%v: %d, want 400", bad, status)
		}
	}
}

// post sends an authenticated form to the account's resource and fails
// unless it is created.
func post(t *testing.T, f *Fake, resource string, form url.Values) {
	t.Helper()
	if status := send(t, f, resource, form); status != http.StatusCreated {
		t.Fatalf("POST %s: %d", resource, status)
	}
}

func send(t *testing.T, f *Fake, resource string, form url.Values) int {
	t.Helper()
	req, _ := http.NewRequest("POST", f.URL()+"/2010-04-01/Accounts/"+f.AccountSID()+"/"+resource, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(f.AccountSID(), f.AuthToken())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// waitEnded waits for the call's last status callback and returns the call.
func waitEnded(t *testing.T, f *Fake, sid string) Call {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, c := range f.Calls() {
			if c.SID == sid && !c.Ended.IsZero() && len(c.Callbacks) > 0 && c.Callbacks[len(c.Callbacks)-1].Get("CallStatus") == c.Status {
				return c
			}
		}
	}
	t.Fatalf("call %s never ended", sid)
	return Call{}
}
