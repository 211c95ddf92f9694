package relay

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"time"
)

// modelToCarrier reads the model's events: audio deltas go to the caller as
// they are; the rest drives barge-in, tools and transcripts.
func (c *Call) modelToCarrier(ctx context.Context) error {
	var in bytes.Buffer
	out := make([]byte, 0, 8192)
	for {
		if err := readInto(ctx, c.model, &in); err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return end(EndModelDisconnect, err)
		}
		msg := in.Bytes()
		switch string(stringField(msg, "type")) {
		case "response.output_audio.delta":
			delta := stringField(msg, "delta")
			if len(delta) == 0 {
				continue
			}
			var err error
			if out, err = c.audioOut(ctx, out, stringField(msg, "item_id"), delta); err != nil {
				return err
			}
		case "response.output_audio.done":
			var err error
			if out, err = c.markRest(ctx, out); err != nil {
				return err
			}
		case "input_audio_buffer.speech_started":
			if err := c.bargeIn(ctx); err != nil {
				return err
			}
		case "response.created":
			c.mu.Lock()
			c.responseActive = true
			c.mu.Unlock()
		case "response.done":
			if err := c.responseDone(ctx); err != nil {
				return err
			}
			if c.shouldEndNow() {
				return end(EndAgentHangup, nil)
			}
		case "response.function_call_arguments.done":
			if err := c.toolCall(ctx, msg); err != nil {
				return err
			}
		case "response.output_audio_transcript.done":
			c.transcript(msg, "agent", "transcript")
		case "conversation.item.input_audio_transcription.completed":
			c.transcript(msg, "caller", "transcript")
		case "session.updated":
			if err := c.sessionReady(ctx); err != nil {
				return err
			}
		case "error":
			var e struct {
				Error struct{ Type, Code, Message string }
			}
			json.Unmarshal(msg, &e)
			c.log.Warn("model error event", "type", e.Error.Type, "code", e.Error.Code, "message", e.Error.Message)
			c.opts.OnEvent(Event{Type: "error", Text: e.Error.Message, At: time.Now()})
		}
	}
}

// sessionReady runs once the model has taken the session.update: the agent
// speaks first if it should, then held caller frames go out, then caller
// audio flows directly. The lock is not held while writing, so the carrier
// side keeps holding frames meanwhile; they are sent in the next round, and
// ready is set only when a round finds none held, under the lock holdEarly
// takes: so no caller frame overtakes a held one, nor the SpeakFirst.
func (c *Call) sessionReady(ctx context.Context) error {
	if c.ready.Load() { // only this goroutine sets it
		return nil
	}
	if c.opts.SpeakFirst != nil {
		if err := c.writeModel(ctx, c.opts.SpeakFirst); err != nil {
			return err
		}
	}
	var out []byte
	for {
		c.mu.Lock()
		held := c.early
		c.early = nil
		if len(held) == 0 {
			c.ready.Store(true)
		}
		c.mu.Unlock()
		if len(held) == 0 {
			return nil
		}
		for _, p := range held {
			out = appendAudio(out[:0], p)
			if err := c.writeModel(ctx, out); err != nil {
				return err
			}
		}
	}
}

// audioOut sends one model audio delta to the carrier, and a mark after each
// MarkInterval of audio, so that the played position is known.
func (c *Call) audioOut(ctx context.Context, out []byte, itemID, delta []byte) ([]byte, error) {
	c.mu.Lock()
	if string(itemID) != c.itemID {
		c.gen++
		c.itemID = string(itemID)
		c.sentBytes, c.markedBytes, c.playedBytes = 0, 0, 0
	}
	c.sentBytes += int64(base64.StdEncoding.DecodedLen(len(delta)) - padding(delta))
	gen, sent := c.gen, c.sentBytes
	needMark := sent-c.markedBytes >= c.opts.MarkInterval.Milliseconds()*8
	if needMark {
		c.markedBytes = sent
	}
	c.mu.Unlock()

	out = appendMedia(out[:0], c.opts.StreamSID, delta)
	if err := c.writeCarrier(ctx, out); err != nil {
		return out, err
	}
	c.agentFrames.Add(1)
	if needMark {
		out = appendMark(out[:0], c.opts.StreamSID, gen, sent)
		if err := c.writeCarrier(ctx, out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// markRest sends a mark for audio sent since the last mark.
func (c *Call) markRest(ctx context.Context, out []byte) ([]byte, error) {
	c.mu.Lock()
	gen, sent, need := c.gen, c.sentBytes, c.sentBytes > c.markedBytes
	c.markedBytes = c.sentBytes
	c.mu.Unlock()
	if !need {
		return out, nil
	}
	out = appendMark(out[:0], c.opts.StreamSID, gen, sent)
	return out, c.writeCarrier(ctx, out)
}

// bargeIn handles the caller starting to speak: if agent audio is still
// playing, the carrier drops what it has buffered and the model is told how
// much of the item the caller actually heard.
func (c *Call) bargeIn(ctx context.Context) error {
	c.mu.Lock()
	if c.itemID == "" || c.sentBytes == 0 || c.playedBytes >= c.sentBytes {
		c.mu.Unlock()
		return nil
	}
	itemID, playedMs := c.itemID, c.playedBytes/8
	c.gen++ // echoes of marks cleared now mean dropped, not played
	c.itemID, c.sentBytes, c.markedBytes, c.playedBytes = "", 0, 0, 0
	c.mu.Unlock()

	if err := c.writeCarrier(ctx, appendClear(nil, c.opts.StreamSID)); err != nil {
		return err
	}
	truncate, _ := json.Marshal(struct {
		Type         string `json:"type"`
		ItemID       string `json:"item_id"`
		ContentIndex int    `json:"content_index"`
		AudioEndMs   int64  `json:"audio_end_ms"`
	}{"conversation.item.truncate", itemID, 0, playedMs})
	return c.writeModel(ctx, truncate)
}

func (c *Call) transcript(msg []byte, role, typ string) {
	var ev struct {
		Transcript string `json:"transcript"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.Transcript == "" {
		return
	}
	c.opts.OnEvent(Event{Type: typ, Role: role, Text: ev.Transcript, At: time.Now()})
}
