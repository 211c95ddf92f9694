package egress

import (
	"errors"
	"net/netip"
	"syscall"
)

// Control is the connect-time half of the policy, a net.Dialer Control
// function: it runs on every socket right before it connects, with the
// address actually dialed, after DNS and for each redirect's target. A
// name that resolved to a public address for one lookup and to an
// internal one for the next (DNS rebinding) is still caught, and nothing
// is sent to a refused address. Its error is a *BlockedError.
func Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{What: "an address that cannot be checked"}
	}
	return Check(ap.Addr())
}

// Refusal is how a request the policy stopped is recorded (a delivery's
// attempt, a log line): "blocked: " and the reason; "" when err is not the
// policy's refusal.
func Refusal(err error) string {
	var b *BlockedError
	if !errors.As(err, &b) {
		return ""
	}
	return "blocked: " + b.Error() + "; agentline sends nothing to internal addresses"
}
