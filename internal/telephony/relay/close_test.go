package relay_test

import (
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/telephony/relay"
)

// TestEveryEndingSendsACloseFrame checks that both peers get a close frame
// with a status and the end reason, not a dropped connection (1006), on a
// normal end and on a failure.
func TestEveryEndingSendsACloseFrame(t *testing.T) {
	t.Run("caller hangs up", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		r.send(`{"event":"stop","streamSid":"MZ1","stop":{}}`)
		if got := carrierClose(t, r); got.Code != websocket.StatusNormalClosure || got.Reason != string(relay.EndCallerHangup) {
			t.Fatalf("carrier close = %v %q, want 1000 caller_hangup", got.Code, got.Reason)
		}
		if res := r.waitResult(); res.Reason != relay.EndCallerHangup {
			t.Fatalf("reason = %s", res.Reason)
		}
		if !r.model.WaitDone(time.Second) {
			t.Fatal("model socket still open")
		}
		if got := r.model.CloseStatus(); got != websocket.StatusNormalClosure {
			t.Fatalf("model close status = %v, want 1000", got)
		}
	})
	t.Run("model fails", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		r.model.Drop()
		if got := carrierClose(t, r); got.Code != websocket.StatusInternalError || got.Reason != string(relay.EndModelDisconnect) {
			t.Fatalf("carrier close = %v %q, want 1011 model_disconnected", got.Code, got.Reason)
		}
		if res := r.waitResult(); res.Reason != relay.EndModelDisconnect {
			t.Fatalf("reason = %s", res.Reason)
		}
	})
	t.Run("ended from outside", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		(<-r.call).End(nil)
		if got := carrierClose(t, r); got.Code != websocket.StatusNormalClosure || got.Reason != string(relay.EndCanceled) {
			t.Fatalf("carrier close = %v %q, want 1000 canceled", got.Code, got.Reason)
		}
		r.waitResult()
		if !r.model.WaitDone(time.Second) {
			t.Fatal("model socket still open")
		}
		if got := r.model.CloseStatus(); got != websocket.StatusNormalClosure {
			t.Fatalf("model close status = %v, want 1000", got)
		}
	})
	// A carrier that no longer reads never answers the close frame: the
	// ending waits for it only closeTimeout, not the library's 5 s, so Run
	// returns well within waitResult's bound.
	t.Run("carrier answers nothing", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		(<-r.call).End(nil)
		if res := r.waitResult(); res.Reason != relay.EndCanceled {
			t.Fatalf("reason = %s", res.Reason)
		}
		if !r.model.WaitDone(time.Second) {
			t.Fatal("model socket still open")
		}
		if got := r.model.CloseStatus(); got != websocket.StatusNormalClosure {
			t.Fatalf("model close status = %v, want 1000", got)
		}
	})
}

// carrierClose reads the carrier's socket until it closes and returns the
// close frame (code -1 without one).
func carrierClose(t *testing.T, r *rig) websocket.CloseError {
	t.Helper()
	for {
		if _, _, err := r.carrier.Read(r.ctx); err != nil {
			ce := websocket.CloseError{Code: -1}
			errors.As(err, &ce)
			return ce
		}
	}
}
