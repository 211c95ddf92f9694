package callsim

import (
	"bytes"
	"context"
	"math"
	"time"

	"github.com/agentline/agentline/internal/g711"
)

// The callee's script: how long they wait for the agent's greeting, what
// they say, and how long they listen after it before hanging up.
const (
	greetingWait = 10 * time.Second
	afterAgent   = 300 * time.Millisecond // quiet after the agent's audio has played
	calleeSays   = 1200 * time.Millisecond
	calleePause  = 800 * time.Millisecond // silence after it: voice detection hears the end
	calleeListen = 1500 * time.Millisecond
)

// Callee answers an outbound call placed with this TwiML, as a person
// would: it opens the TwiML's stream like the carrier (signed as opts
// say, on opts.Server), waits for the agent's greeting to play, says
// something (a voice-like sound, loud enough for voice detection), listens
// to the answer and hangs up (stop); with no greeting within greetingWait it
// hangs up at once. It returns when it has hung up, the server has ended
// the stream, or ctx has ended (stop sent: see answer). The sandbox's
// carrier plays each outbound call with it.
func Callee(ctx context.Context, twiml string, opts Options) error {
	return answer(ctx, twiml, opts, func(c *Call) error {
		wait, cancel := context.WithTimeout(ctx, greetingWait)
		_, err := c.WaitFor(wait, func(m Message) bool { return m.Event == "media" })
		cancel()
		if err != nil {
			return nil // no greeting (answer hangs up), or the call ended
		}
		if err := c.waitPlayed(ctx, afterAgent); err != nil {
			return nil // the call ended
		}
		speech := append(Voice(calleeSays), bytes.Repeat([]byte{0xFF}, int(calleePause.Seconds()*8000))...)
		if err := c.Play(ctx, speech, true); err != nil {
			return nil
		}
		if err := c.waitPlayed(ctx, calleeListen); err != nil {
			return nil
		}
		return c.hangUp(ctx)
	})
}

// answer plays the carrier's side of an answered outbound call placed with
// this TwiML: it opens the TwiML's stream (signed as opts say, on
// opts.Server, echoing marks), runs script, and ends the stream as Twilio
// does, which sends stop whenever it stops a stream: at the callee's
// hang-up, and also when the call is hung up or redirected through the
// REST API (ctx ends) or the script gives up. Only a stream the server
// closed, or one already stopped, is closed without one.
func answer(ctx context.Context, twiml string, opts Options, script func(c *Call) error) error {
	s, err := ParseTwiML(twiml)
	if err != nil {
		return err
	}
	opts.EchoMarks = true
	c, err := Open(ctx, s, opts)
	if err != nil {
		return err
	}
	defer c.end(ctx)
	return script(c)
}

// end sends stop unless the stream was stopped or the server closed it,
// then closes the socket. ctx may have ended: stop gets a moment of its
// own.
func (c *Call) end(ctx context.Context) {
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if !stopped && !c.ended() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		c.Stop(sctx)
		cancel()
	}
	c.Close()
}

// hangUp sends stop, as a callee hanging up, and waits a moment for the
// server to close the stream, as it does after stop.
func (c *Call) hangUp(ctx context.Context) error {
	if err := c.Stop(ctx); err != nil {
		return nil
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
	}
	return nil
}

// ended reports whether the server has closed the stream.
func (c *Call) ended() bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// waitPlayed waits until the agent's audio received so far has had time
// to play (it arrives faster than it plays, from the first frame on) and
// then quiet more, with nothing new arriving; an error when the stream
// or ctx ended first.
func (c *Call) waitPlayed(ctx context.Context, quiet time.Duration) error {
	start := time.Now()
	for {
		heard := len(c.Audio())
		playing := time.Duration(heard) * time.Second / 8000
		var first time.Time
		c.mu.Lock()
		first = c.firstMedia
		c.mu.Unlock()
		until := start.Add(quiet)
		if !first.IsZero() && first.Add(playing+quiet).After(until) {
			until = first.Add(playing + quiet)
		}
		select {
		case <-time.After(time.Until(until)):
		case <-c.Done():
			return errStreamClosed
		case <-ctx.Done():
			return ctx.Err()
		}
		if len(c.Audio()) == heard {
			return nil
		}
	}
}

// Voice returns d of a voice-like sound as 8 kHz mu-law: syllables of a
// low, gliding tone with pauses, loud enough for voice detection.
func Voice(d time.Duration) []byte {
	out := make([]byte, int(d.Seconds()*8000))
	const syl = 1600 // 200 ms
	for n := range out {
		pos := n % syl
		if pos > syl*4/5 {
			out[n] = g711.Encode(0)
			continue
		}
		pitch := 140 + 40*math.Sin(float64(n/syl))
		env := math.Sin(math.Pi * float64(pos) / (syl * 4 / 5))
		t := float64(n) / 8000
		out[n] = g711.Encode(int16(9000 * env * (math.Sin(2*math.Pi*pitch*t) + 0.4*math.Sin(4*math.Pi*pitch*t)) / 1.4))
	}
	return out
}
