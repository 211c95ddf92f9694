package telephony

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// machineHook is an AnsweringMachine that reports what it hears.
type machineHook chan agentline.Call

func (m machineHook) Answered(ctx context.Context, call agentline.Call, answeredBy string) error {
	if call.AnsweredBy != answeredBy {
		panic("the hook heard a verdict the record does not have yet")
	}
	m <- call
	return nil
}

// A call placed with machine detection to a number ending in 7 reaches the
// fake carrier's answering machine: the create-call request asks for
// detection in the background with our callback URL, the carrier's signed
// verdict (machine_start) is recorded on the call, and the hook hears it
// once, even when the carrier sends it again.
func TestMachineDetectionReachesTheHook(t *testing.T) {
	t.Parallel()
	e := newOpsEnv(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := twiliofake.New(twiliofake.Options{Play: &twiliofake.Play{Server: "http://" + ln.Addr().String(), Ring: 100 * time.Millisecond,
		Answer: func(ctx context.Context, c twiliofake.Call) error {
			select { // the machine records until the test ends
			case <-ctx.Done():
			case <-time.After(20 * time.Second):
			}
			return nil
		}}})
	t.Cleanup(f.Close)
	tw, err := carrier.NewTwilio(carrier.TwilioConfig{AccountSID: f.AccountSID(), AuthToken: f.AuthToken(), BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	heard := make(machineHook, 4)
	e.h.carrierAPI, e.h.machine = tw, heard
	e.h.signatures = carrier.NewSignatures(f.AuthToken(), e.h.host, false)
	mux := http.NewServeMux()
	for _, r := range []httpx.Route{e.h.signatures.Route(statusPath, e.h.statusCallback), e.h.signatures.Route(amdPath, e.h.amdCallback)} {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	e.number(t, "+14155550100", e.ada)
	ctx := context.Background()

	_, err = e.h.PlaceCall(ctx, e.project, e.ada, "+14155550127", CallOptions{MachineDetection: "Sometimes"})
	wantCode(t, err, agentline.EInvalid)
	call, err := e.h.PlaceCall(ctx, e.project, e.ada, "+14155550127", CallOptions{MachineDetection: carrier.AMDEnable})
	if err != nil {
		t.Fatal(err)
	}
	var got agentline.Call
	select {
	case got = <-heard:
	case <-time.After(15 * time.Second):
		t.Fatal("the hook heard no verdict")
	}
	if got.ID != call.ID || got.AnsweredBy != agentline.AnsweredByMachineStart || !agentline.AnsweredByMachine(got.AnsweredBy) {
		t.Fatalf("hook heard %+v, want call %d answered by machine_start", got, call.ID)
	}
	if stored, err := e.db.Call(ctx, e.project, call.CallSID); err != nil || stored.AnsweredBy != agentline.AnsweredByMachineStart {
		t.Fatalf("record: %+v %v", stored, err)
	}
	fc := f.Calls()[0]
	if fc.MachineDetection != carrier.AMDEnable || fc.AsyncAmd != "true" || fc.AsyncAmdStatusCallbackMethod != "POST" ||
		fc.AsyncAmdStatusCallback != "https://bot.example.test/api/telephony/amd" || len(fc.AMDCallbacks) != 1 {
		t.Fatalf("the carrier was asked for %+v", fc)
	}
	// The same verdict again is acknowledged and not acted on twice.
	form := fc.AMDCallbacks[0]
	req, _ := http.NewRequest("POST", srv.URL+amdPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twiliofake.Sign(f.AuthToken(), "https://bot.example.test"+amdPath, form))
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("verdict again: %v %v", res, err)
	}
	res.Body.Close()
	select {
	case again := <-heard:
		t.Fatalf("the hook heard the same verdict twice: %+v", again)
	case <-time.After(200 * time.Millisecond):
	}
}
