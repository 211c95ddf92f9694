package relay

// A Gemini Live connection lasts about ten minutes; the service says
// goAway (with the time left) before it closes one. The call then opens a
// new connection whose setup resumes the session with the last resumable
// handle (sessionResumptionUpdate), and moves to it once it is set up:
//
//  1. goAway: dial the new connection, off the model's reader, which goes
//     on relaying the old one meanwhile;
//  2. from the resuming setup on, caller frames are held (switching);
//  3. setupComplete: the new connection becomes the current one, the held
//     frames go to it in order, then frames flow to it directly;
//  4. the old connection is closed (1000); its reader moves to the new one.
//
// A switch-over that fails (no handle yet, a refused dial or setup) leaves
// the call on the old connection, which ends it when it closes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/provider/geminilive"
)

var errNoHandle = errors.New("no resumable session handle yet")

// resumeTimeout bounds the dial and setup of a new connection.
const resumeTimeout = 10 * time.Second

// resumptionUpdate keeps the session's latest resumable handle, by the
// rule test runs' Live sessions follow too (geminilive.ResumptionUpdate).
func (g *geminiSide) resumptionUpdate(val []byte) {
	var u geminilive.ResumptionUpdate
	json.Unmarshal(val, &u)
	handle := u.Handle()
	if handle == "" {
		return
	}
	g.mu.Lock()
	g.handle = handle
	g.mu.Unlock()
}

// goAway starts the switch-over to a new connection, once.
func (g *geminiSide) goAway(ctx context.Context, timeLeft []byte) {
	g.mu.Lock()
	if g.resuming || g.closed || g.opts.Dial == nil {
		g.mu.Unlock()
		return
	}
	g.resuming = true
	g.mu.Unlock()
	g.c.log.Info("the model's connection is going away; resuming the session on a new one", "time_left", string(timeLeft))
	g.resumes.Go(func() {
		if err := g.resume(ctx); err != nil && ctx.Err() == nil {
			g.c.log.Warn("could not resume the model's session on a new connection; the call ends with the old one", "err", err)
			g.c.opts.OnEvent(Event{Type: "error", Text: "could not resume the model's session: " + err.Error(), At: time.Now()})
		}
	})
}

// resume opens the new connection, sets it up with the last handle and
// switches the call to it.
func (g *geminiSide) resume(ctx context.Context) error {
	start := time.Now()
	g.mu.Lock()
	handle := g.handle
	g.mu.Unlock()
	if handle == "" {
		return errNoHandle
	}
	dctx, cancel := context.WithTimeout(ctx, resumeTimeout)
	defer cancel()
	sock, err := g.opts.Dial(dctx)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	// A read below waits on the socket, not on dctx: closing it ends that.
	stopClose := context.AfterFunc(dctx, func() { sock.CloseNow() })
	g.setSwitching(true)
	err = g.setUp(sock, handle)
	if !stopClose() || err != nil {
		g.unhold()
		sock.CloseNow()
		if err == nil {
			err = context.Cause(dctx)
		}
		return err
	}
	lc := g.connect(sock)
	sock.onRead(g.c.carrierOut.flush)
	g.mu.Lock()
	if g.closed { // the call ended meanwhile: closeAll took the old one
		g.mu.Unlock()
		CloseSocket(sock, websocket.StatusNormalClosure, "call ended")
		return nil
	}
	old := g.cur.Swap(lc)
	g.mu.Unlock()
	// The old connection is retired whatever happens next; closing it
	// moves its reader to the new one.
	defer closeSocket(old.sock, old.out, websocket.StatusNormalClosure, "go_away")
	if err := g.sendHeld(ctx, lc); err != nil {
		return err
	}
	g.c.log.Info("the model's session resumed on a new connection", "took", time.Since(start))
	return nil
}

// setUp sends the resuming setup and reads until setupComplete, keeping
// resumption updates that come first.
func (g *geminiSide) setUp(sock *Socket, handle string) error {
	if err := sock.Write(context.Background(), websocket.MessageText, g.opts.Setup(handle)); err != nil {
		return fmt.Errorf("send setup: %w", err)
	}
	for range 100 {
		in, err := readMsg(sock.Conn)
		if err != nil {
			return fmt.Errorf("setup refused: %w", err)
		}
		_, _, done := field(in.Bytes(), "setupComplete")
		if u, _, ok := field(in.Bytes(), "sessionResumptionUpdate"); ok {
			g.resumptionUpdate(u)
		}
		putRead(in)
		if done {
			return nil
		}
	}
	return errors.New("no setupComplete")
}

func (g *geminiSide) setSwitching(on bool) {
	g.mu.Lock()
	g.switching = on
	g.mu.Unlock()
}

// unhold ends a failed switch-over: held frames go to the old connection.
func (g *geminiSide) unhold() {
	g.sendHeld(context.Background(), g.cur.Load())
}

// sendHeld sends the frames held during the switch-over to lc, round
// after round until a round finds none, and only then lets frames flow
// directly (under mu, which sendFrame takes): no frame overtakes a held one.
func (g *geminiSide) sendHeld(ctx context.Context, lc *liveConn) error {
	for {
		g.mu.Lock()
		held := g.held
		g.held = nil
		if len(held) == 0 {
			g.switching, g.resuming = false, false
		}
		g.mu.Unlock()
		if len(held) == 0 {
			return nil
		}
		for _, p := range held {
			if _, err := lc.out.send(func(b *batch) { b.data = g.appendAudio(b.data, p); b.end() }); err != nil {
				return sendErr(ctx, err, EndModelDisconnect)
			}
		}
	}
}

// close is the call's end: no switch-over starts or completes after it;
// it returns the connection to close.
func (g *geminiSide) close() *liveConn {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return g.cur.Load()
}
