package telephony

import (
	"context"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// An outbound call that ends without being answered (busy, no answer)
// never opens its stream: once its final status callback is in, a drain
// no longer waits for it.
func TestUnansweredCallIsNotAwaited(t *testing.T) {
	t.Parallel()
	e := newOpsEnv(t, nil)
	e.number(t, "+14155550100", e.ada)
	call, err := e.h.placeCall(context.Background(), e.project, e.ada, "+14155550128")
	if err != nil {
		t.Fatal(err)
	}
	waits := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		return e.h.WaitCalls(ctx) != nil
	}
	if !waits() {
		t.Fatal("a call just placed is not awaited")
	}
	r := httptest.NewRequest("POST", statusPath, nil)
	r.PostForm = url.Values{"CallSid": {call.CallSID}, "CallStatus": {"busy"}, "Direction": {"outbound-api"}, "CallDuration": {"0"}}
	w := httptest.NewRecorder()
	if err := e.h.statusCallback(w, r); err != nil || w.Code != 204 {
		t.Fatalf("status callback: %v %d", err, w.Code)
	}
	if waits() {
		t.Fatal("a drain still waits for the stream of a call that ended busy")
	}
}
