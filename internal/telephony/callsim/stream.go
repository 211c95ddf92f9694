// The carrier's side of an open media stream: what it sends, what it hears.

package callsim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

func (c *Call) send(ctx context.Context, msg any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	// A write whose context ends closes the socket: the call's end (a
	// REST hang-up) must leave it open for the stop that follows.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return c.conn.Write(wctx, websocket.MessageText, b)
}

// sendSeq sends an event with the next sequence number, as Twilio numbers
// every message after connected.
func (c *Call) sendSeq(ctx context.Context, event, key string, body any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.seq++
	msg := map[string]any{"event": event, "sequenceNumber": strconv.Itoa(c.seq), "streamSid": c.StreamSID}
	if key != "" {
		msg[key] = body
	}
	return c.send(ctx, msg)
}

// SendMedia sends one frame of caller audio (raw mu-law bytes).
func (c *Call) SendMedia(ctx context.Context, mulaw []byte) error {
	return c.SendPayload(ctx, base64.StdEncoding.EncodeToString(mulaw))
}

// SendPayload sends one frame of caller audio already base64-encoded.
func (c *Call) SendPayload(ctx context.Context, payload string) error {
	c.wmu.Lock()
	ts := c.ts
	n, _ := base64.StdEncoding.DecodeString(payload)
	c.ts += int64(len(n) / 8)
	chunk := c.seq
	c.wmu.Unlock()
	return c.sendSeq(ctx, "media", "media", map[string]string{"track": "inbound", "chunk": strconv.Itoa(chunk),
		"timestamp": strconv.FormatInt(ts, 10), "payload": payload})
}

// Play sends audio as 20 ms frames; paced, at the rate a phone line carries
// them.
func (c *Call) Play(ctx context.Context, mulaw []byte, paced bool) error {
	var tick *time.Ticker
	if paced {
		tick = time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
	}
	for off := 0; off < len(mulaw); off += FrameBytes {
		if err := c.SendMedia(ctx, mulaw[off:min(off+FrameBytes, len(mulaw))]); err != nil {
			return err
		}
		if tick != nil {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// SendDTMF sends a keypad digit.
func (c *Call) SendDTMF(ctx context.Context, digit string) error {
	return c.sendSeq(ctx, "dtmf", "dtmf", map[string]string{"track": "inbound_track", "digit": digit})
}

// EchoMark sends back a mark, as the carrier does once the audio before it
// has played (or was cleared).
func (c *Call) EchoMark(ctx context.Context, name string) error {
	return c.sendSeq(ctx, "mark", "mark", map[string]string{"name": name})
}

// Stop sends stop, as the carrier does when the caller hangs up.
func (c *Call) Stop(ctx context.Context) error {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	return c.sendSeq(ctx, "stop", "stop", map[string]string{"callSid": c.CallSID})
}

// Close closes the socket without a stop, as a dropped connection would.
func (c *Call) Close() error { return c.conn.CloseNow() }

func (c *Call) read() {
	defer close(c.done)
	for {
		_, b, err := c.conn.Read(context.Background())
		if err != nil {
			c.mu.Lock()
			c.closeErr = err
			c.mu.Unlock()
			return
		}
		var m struct {
			Event string `json:"event"`
			Media struct {
				Payload string `json:"payload"`
			} `json:"media"`
			Mark struct {
				Name string `json:"name"`
			} `json:"mark"`
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		msg := Message{Event: m.Event, Payload: m.Media.Payload, Mark: m.Mark.Name}
		c.mu.Lock()
		if msg.Event == "media" && c.firstMedia.IsZero() {
			c.firstMedia = time.Now()
		}
		c.received = append(c.received, msg)
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
		if m.Event == "mark" && c.echoMarks {
			c.EchoMark(context.Background(), m.Mark.Name)
		}
	}
}

// Received returns the messages the server sent so far.
func (c *Call) Received() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.received...)
}

// Audio returns the agent's audio received so far, as mu-law bytes.
func (c *Call) Audio() []byte {
	var out []byte
	for _, m := range c.Received() {
		if m.Event == "media" {
			b, _ := base64.StdEncoding.DecodeString(m.Payload)
			out = append(out, b...)
		}
	}
	return out
}

// WaitFor waits until a received message satisfies match, and returns its
// index in Received.
func (c *Call) WaitFor(ctx context.Context, match func(Message) bool) (int, error) {
	seen := 0
	for {
		c.mu.Lock()
		for ; seen < len(c.received); seen++ {
			if match(c.received[seen]) {
				c.mu.Unlock()
				return seen, nil
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-c.done:
			return 0, errStreamClosed
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// errStreamClosed: the server closed the stream before what was awaited.
var errStreamClosed = errors.New("the stream closed before the message came")

// Done is closed when the server has closed the stream.
func (c *Call) Done() <-chan struct{} { return c.done }

// CloseStatus is the WebSocket close status the server sent, or -1.
func (c *Call) CloseStatus() websocket.StatusCode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return websocket.CloseStatus(c.closeErr)
}

// CloseReason is the reason the server's close frame carried, or "".
func (c *Call) CloseReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ce websocket.CloseError
	if errors.As(c.closeErr, &ce) {
		return ce.Reason
	}
	return ""
}
