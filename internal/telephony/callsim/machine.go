package callsim

import (
	"context"
	"math"
	"time"

	"github.com/agentline/agentline/internal/g711"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// How the answering machine records: it stops after this much quiet once
// the caller's audio has played, or at the longest message it takes.
const (
	machineSilence    = 3 * time.Second
	machineMaxMessage = 30 * time.Second
)

// Machine answers an outbound call placed with this TwiML as an answering
// machine would, the way the sandbox's carrier plays numbers ending in 7:
// it opens the TwiML's stream like the carrier (signed as opts say, on
// opts.Server), plays its greeting (a voice-like sound of
// twiliofake.MachineGreeting) and its beep (a 1 kHz tone of
// twiliofake.MachineBeep), the lengths the fake's machine detection times
// its verdict by, then records whatever the caller says until it has been
// quiet for a few seconds, and hangs up (stop). It returns when it has
// hung up, the server has ended the stream, or ctx has ended (stop sent:
// see answer).
func Machine(ctx context.Context, twiml string, opts Options) error {
	return answer(ctx, twiml, opts, func(c *Call) error {
		if err := c.Play(ctx, append(Voice(twiliofake.MachineGreeting), Beep(twiliofake.MachineBeep)...), true); err != nil {
			return nil // the call ended
		}
		rec, cancel := context.WithTimeout(ctx, machineMaxMessage)
		err := c.waitPlayed(rec, machineSilence)
		cancel()
		if err != nil && (ctx.Err() != nil || c.ended()) {
			return nil // the call ended
		}
		return c.hangUp(ctx)
	})
}

// Beep returns d of an answering machine's beep as 8 kHz mu-law: a 1 kHz
// tone.
func Beep(d time.Duration) []byte {
	out := make([]byte, int(d.Seconds()*8000))
	for n := range out {
		out[n] = g711.Encode(int16(8000 * math.Sin(2*math.Pi*1000*float64(n)/8000)))
	}
	return out
}
