package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentline/agentline/internal/provider/geminilive"
)

// carrierToModel reads the carrier's messages: caller audio goes to the
// model as it is; mark echoes advance the played position.
func (c *Call) carrierToModel(ctx context.Context) error {
	return relayFrom(ctx, c.carrier, EndCarrierDisconnect, c.fromCarrier)
}

// fromCarrier handles one carrier message; an error ends the call.
func (c *Call) fromCarrier(ctx context.Context, msg []byte) error {
	switch string(stringField(msg, "event")) {
	case "media":
		start := time.Now()
		media, payload := mediaPayload(msg)
		if payload == nil {
			return end(EndRelayProtocolError, errors.New("media message without payload"))
		}
		c.callerFrames.Add(1)
		ts := mediaTimestamp(media)
		if c.gem != nil {
			c.gem.voice.frame(payload, ts)
		}
		if r := c.opts.Recorder; r != nil {
			r.Caller(payload, ts)
		}
		if !c.ready.Load() {
			if held, kept := c.holdEarly(payload); held {
				if kept {
					c.clock.caller(payload, ts, start)
				}
				return nil
			}
		}
		c.clock.caller(payload, ts, start)
		if err := c.sendAudio(ctx, payload, c.carrierLazy); err != nil {
			return err
		}
		if c.opts.FrameLatency != nil {
			c.opts.FrameLatency.Observe(time.Since(start).Seconds())
		}
	case "mark":
		c.markEchoed(markName(msg))
		if c.shouldEndNow() {
			return end(EndAgentHangup, nil)
		}
	case "dtmf":
		return c.dtmf(ctx, msg)
	case "stop":
		return end(EndCallerHangup, nil)
	case "connected", "start":
	default:
		c.log.Debug("ignored carrier message", "event", string(stringField(msg, "event")))
	}
	return nil
}

// sendAudio sends one caller frame to the model, built in the queue; lazy
// (only for the carrier's reader) leaves it for the flush before that
// reader's next socket read.
func (c *Call) sendAudio(ctx context.Context, payload []byte, lazy bool) error {
	if c.gem != nil {
		return c.gem.sendFrame(ctx, payload, lazy)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	_, err := c.modelOut.put(lazy, func(b *batch) { b.data = appendAudio(b.data, payload); b.end() })
	if err != nil {
		return sendErr(ctx, err, EndModelDisconnect)
	}
	return nil
}

// holdEarly keeps a caller frame that came before session.updated (the
// model would take it for 24 kHz PCM). It reports held false when the
// session became ready meanwhile, so the frame is to be sent now, and kept
// false when the frame was dropped (it never reaches the model's buffer).
func (c *Call) holdEarly(payload []byte) (held, kept bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ready.Load() {
		return false, false
	}
	if len(c.early) < 100 { // 2 s of 20 ms frames; later ones are dropped
		c.early = append(c.early, bytes.Clone(payload))
		return true, true
	}
	return true, false
}

// markEchoed records that the carrier has played the audio before a mark.
func (c *Call) markEchoed(name []byte) {
	gen, n, ok := parseMark(name)
	if !ok {
		return
	}
	c.mu.Lock()
	if gen == c.gen && n > c.playedBytes {
		c.playedBytes = n
	}
	c.mu.Unlock()
}

func (c *Call) dtmf(ctx context.Context, msg []byte) error {
	var ev struct {
		DTMF struct {
			Digit string `json:"digit"`
		} `json:"dtmf"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.DTMF.Digit == "" {
		return nil
	}
	c.opts.OnEvent(Event{Type: "dtmf", Text: ev.DTMF.Digit, At: time.Now()})
	if c.gem != nil {
		return c.writeModel(ctx, geminilive.TextInput("The caller pressed "+ev.DTMF.Digit+" on the keypad."))
	}
	item, _ := json.Marshal(map[string]any{
		"type": "conversation.item.create",
		"item": map[string]any{"type": "message", "role": "user",
			"content": []map[string]string{{"type": "input_text", "text": "The caller pressed " + ev.DTMF.Digit + " on the keypad."}}},
	})
	if err := c.writeModel(ctx, item); err != nil {
		return err
	}
	c.mu.Lock()
	active := c.responseActive
	c.mu.Unlock()
	if !active {
		return c.writeModel(ctx, responseCreate)
	}
	return nil
}
