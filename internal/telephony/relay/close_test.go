package relay_test

import (
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/telephony/relay"
)

// TestEveryEndingSendsACloseFrame checks that both peers get a close frame
// with a status, not a dropped connection (1006), on a normal end and on a
// failure.
func TestEveryEndingSendsACloseFrame(t *testing.T) {
	t.Run("caller hangs up", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		r.send(`{"event":"stop","streamSid":"MZ1","stop":{}}`)
		if got := carrierCloseStatus(t, r); got != websocket.StatusNormalClosure {
			t.Fatalf("carrier close status = %v, want 1000", got)
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
		if got := carrierCloseStatus(t, r); got != websocket.StatusInternalError {
			t.Fatalf("carrier close status = %v, want 1011", got)
		}
		if res := r.waitResult(); res.Reason != relay.EndModelDisconnect {
			t.Fatalf("reason = %s", res.Reason)
		}
	})
	t.Run("ended from outside", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		(<-r.call).End(nil)
		if got := carrierCloseStatus(t, r); got != websocket.StatusNormalClosure {
			t.Fatalf("carrier close status = %v, want 1000", got)
		}
		r.waitResult()
		if !r.model.WaitDone(time.Second) {
			t.Fatal("model socket still open")
		}
		if got := r.model.CloseStatus(); got != websocket.StatusNormalClosure {
			t.Fatalf("model close status = %v, want 1000", got)
		}
	})
}

// carrierCloseStatus reads the carrier's socket until it closes and returns
// the close frame's status (-1 without one).
func carrierCloseStatus(t *testing.T, r *rig) websocket.StatusCode {
	t.Helper()
	for {
		if _, _, err := r.carrier.Read(r.ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}
