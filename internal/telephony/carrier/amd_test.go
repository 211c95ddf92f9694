package carrier

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// A call placed with machine detection asks Twilio for it in the
// background, with the verdict POSTed to our callback: the create-call
// request carries MachineDetection, AsyncAmd=true, AsyncAmdStatusCallback
// and its method. The verdict the carrier sends for a number ending in 7
// (an answering machine) passes the same signature check, through
// twilio-go's RequestValidator, as every other carrier webhook. A call
// placed without detection carries none of these parameters.
func TestCreateCallWithMachineDetection(t *testing.T) {
	t.Parallel()
	verdicts := make(chan url.Values, 4)
	sigs := NewSignatures("0123456789abcdef0123456789abcdef", "bot.example.com", false)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := sigs.Check(func(w http.ResponseWriter, r *http.Request) error {
			if r.URL.Path == "/api/telephony/amd" {
				verdicts <- r.PostForm
			}
			return nil
		})(w, r)
		if err != nil {
			t.Errorf("%s: %v", r.URL.Path, err)
		}
	}))
	defer srv.Close()
	f := twiliofake.New(twiliofake.Options{AuthToken: "0123456789abcdef0123456789abcdef", Play: &twiliofake.Play{
		Server: srv.URL, Ring: 100 * time.Millisecond,
		Answer: func(ctx context.Context, c twiliofake.Call) error {
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
			return nil
		}}})
	defer f.Close()
	c := newTwilio(t, f, f.AuthToken(), 0)
	ctx := context.Background()
	if _, err := c.BuyNumber(ctx, BuyRequest{PhoneNumber: "+14155550100"}); err != nil {
		t.Fatal(err)
	}
	placed, err := c.CreateCall(ctx, CallRequest{To: "+14155550127", From: "+14155550100", TwiML: "<Response><Hangup/></Response>",
		StatusCallbackURL: "https://bot.example.com/api/telephony/status",
		MachineDetection:  &MachineDetection{Mode: AMDEnable, CallbackURL: "https://bot.example.com/api/telephony/amd"}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := c.CreateCall(ctx, CallRequest{To: "+14155550123", From: "+14155550100", TwiML: "<Response><Hangup/></Response>"})
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range f.Calls() {
		want := [4]string{"", "", "", "POST"}
		if call.SID == placed.SID {
			want = [4]string{"Enable", "true", "https://bot.example.com/api/telephony/amd", "POST"}
		} else if call.SID != plain.SID {
			continue
		}
		if got := [4]string{call.MachineDetection, call.AsyncAmd, call.AsyncAmdStatusCallback, call.AsyncAmdStatusCallbackMethod}; got != want {
			t.Errorf("call to %s carried machine detection %q, want %q", call.To, got, want)
		}
	}
	select {
	case v := <-verdicts:
		if v.Get("CallSid") != placed.SID || v.Get("AnsweredBy") != "machine_start" || v.Get("MachineDetectionDuration") == "" {
			t.Errorf("verdict %v", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no machine detection verdict arrived")
	}
	c.HangUp(ctx, placed.SID)
	c.HangUp(ctx, plain.SID)
}
