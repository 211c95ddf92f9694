package relay

import (
	"time"

	"github.com/coder/websocket"
)

// closeTimeout bounds each socket's closing: sending what is queued, the
// close frame, and waiting for the peer's. A peer that no longer answers
// must not hold the call.
const closeTimeout = time.Second

// closeAll closes both sockets with a close frame, model first. Closing
// the carrier's socket ends the call (the TwiML after <Connect> is
// <Hangup/>), so BeforeCarrierClose runs between the two.
func (c *Call) closeAll(res Result) {
	code, reason := closeStatus(res.Reason)
	model, out := c.model, c.modelOut
	if c.gem != nil {
		lc := c.gem.close()
		model, out = lc.sock, lc.out
	}
	closeSocket(model, out, code, reason)
	if c.opts.BeforeCarrierClose != nil {
		c.opts.BeforeCarrierClose(res)
	}
	closeSocket(c.carrier, c.carrierOut, code, reason)
}

// closeStatus is the close frame for an ending: 1000 when the call ended
// as calls do, 1011 when something failed. The reason is the end reason,
// never an error's text.
func closeStatus(r EndReason) (websocket.StatusCode, string) {
	switch r {
	case EndCallerHangup, EndAgentHangup, EndCanceled, EndCarrierDisconnect:
		return websocket.StatusNormalClosure, string(r)
	default:
		return websocket.StatusInternalError, string(r)
	}
}

// closeSocket lets out write what is queued, then closes conn with a close
// frame, waiting for the peer's until closeTimeout. Over a wire, a deadline
// on it bounds all of that; otherwise a timer cuts a write stuck on a
// peer that stopped reading, and the library bounds its handshake (5 s).
func closeSocket(sock *Socket, out *sender, code websocket.StatusCode, reason string) {
	conn := sock.Conn
	if w := sock.wire; w != nil {
		w.SetDeadline(time.Now().Add(closeTimeout))
		out.stop()
		conn.Close(code, reason)
		return
	}
	cut := time.AfterFunc(closeTimeout, func() { conn.CloseNow() })
	out.stop()
	cut.Stop()
	conn.Close(code, reason)
}

// CloseSocket closes a socket no call is being relayed on (a stream refused
// at admission, or one whose model could not be reached) as a call's
// ending does: with a close frame saying why, so the peer does not see a
// dropped connection (1006), waiting for the peer's frame at most
// closeTimeout over a wire (otherwise the library's own 5 s bound holds).
func CloseSocket(sock *Socket, code websocket.StatusCode, reason string) {
	if w := sock.wire; w != nil {
		w.SetDeadline(time.Now().Add(closeTimeout))
	}
	sock.Close(code, reason)
}

// CloseEnded closes, as CloseSocket does, a socket whose call ended with r
// before the relay ran, with the frame the relay would have sent.
func CloseEnded(sock *Socket, r EndReason) {
	code, reason := closeStatus(r)
	CloseSocket(sock, code, reason)
}
