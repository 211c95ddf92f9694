package relay

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"
)

// modelToCarrier reads the model's events: audio deltas go to the caller as
// they are; the rest drives barge-in, tools and transcripts.
func (c *Call) modelToCarrier(ctx context.Context) error {
	return relayFrom(ctx, c.model, EndModelDisconnect, c.fromModel)
}

// fromModel handles one model event; an error ends the call.
func (c *Call) fromModel(ctx context.Context, msg []byte) error {
	switch string(stringField(msg, "type")) {
	case "response.output_audio.delta":
		if delta := stringField(msg, "delta"); len(delta) > 0 {
			return c.audioOut(ctx, stringField(msg, "item_id"), delta)
		}
	case "response.output_audio.done":
		return c.markRest(ctx)
	case "input_audio_buffer.speech_started":
		return c.bargeIn(ctx)
	case "input_audio_buffer.speech_stopped":
		c.speechStopped(msg)
	case "response.created":
		c.responseStarted()
		c.turnStart(ctx)
	case "response.done":
		c.turnEnd()
		if err := c.responseDone(ctx); err != nil {
			return err
		}
		if c.shouldEndNow() {
			return end(EndAgentHangup, nil)
		}
	case "response.function_call_arguments.done":
		return c.toolCall(ctx, msg)
	case "response.output_audio_transcript.done":
		c.transcript(msg, "agent", "transcript")
	case "conversation.item.input_audio_transcription.completed":
		c.transcript(msg, "caller", "transcript")
	case "session.updated":
		return c.sessionReady(ctx)
	case "error":
		var e struct {
			Error struct{ Type, Code, Message string }
		}
		json.Unmarshal(msg, &e)
		c.log.Warn("model error event", "type", e.Error.Type, "code", e.Error.Code, "message", e.Error.Message)
		c.opts.OnEvent(Event{Type: "error", Text: e.Error.Message, At: time.Now()})
	}
	return nil
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
			if err := c.sendAudio(ctx, p, false); err != nil {
				return err
			}
		}
	}
}

// audioOut sends one model audio delta to the carrier, and a mark after each
// MarkInterval of audio, so that the played position is known. The media
// and its mark are queued together, built in the queue: one write. Only
// the model's reader calls it.
func (c *Call) audioOut(ctx context.Context, itemID, delta []byte) error {
	c.mu.Lock()
	var turnEnd int64
	if string(itemID) != c.itemID {
		c.gen++
		c.itemID = string(itemID)
		c.sentBytes, c.markedBytes, c.playedBytes = 0, 0, 0
		turnEnd, c.callerTurnEnd = c.callerTurnEnd, 0 // this item answers the caller's turn
	}
	c.sentBytes += int64(base64.StdEncoding.DecodedLen(len(delta)) - padding(delta))
	gen, sent := c.gen, c.sentBytes
	needMark := sent-c.markedBytes >= c.opts.MarkInterval.Milliseconds()*8
	if needMark {
		c.markedBytes = sent
	}
	c.mu.Unlock()

	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if r := c.opts.Recorder; r != nil {
		// Before the send: once queued, the carrier may play it and the
		// caller's next frame overtake it in the recording's clock.
		r.Agent(delta)
	}
	sid := c.opts.StreamSID
	// Lazy for the model's reader: flushed before its next read.
	_, err := c.carrierOut.put(c.modelLazy, func(b *batch) {
		b.data = appendMedia(b.data, sid, delta)
		b.end()
		if needMark {
			b.data = appendMark(b.data, sid, gen, sent)
			b.end()
		}
	})
	if err != nil {
		return sendErr(ctx, err, EndCarrierDisconnect)
	}
	if turnEnd != 0 {
		c.turnAnswered(turnEnd, time.Now())
	}
	c.agentFrames.Add(1)
	return nil
}

// markRest sends a mark for audio sent since the last mark.
func (c *Call) markRest(ctx context.Context) error {
	c.mu.Lock()
	gen, sent, need := c.gen, c.sentBytes, c.sentBytes > c.markedBytes
	c.markedBytes = c.sentBytes
	c.mu.Unlock()
	if !need {
		return nil
	}
	return c.writeCarrier(ctx, appendMark(nil, c.opts.StreamSID, gen, sent))
}

// bargeIn handles the caller starting to speak: if agent audio is still
// playing, the carrier drops what it has buffered and the model is told how
// much of the item the caller actually heard.
func (c *Call) bargeIn(ctx context.Context) error {
	itemID, playedMs, cleared, err := c.clearPlayback(ctx)
	if !cleared || err != nil {
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

// clearPlayback tells the carrier to drop the agent audio it has not
// played, if any is left, and returns the item cut and how much of it was
// heard. It returns once the clear is written: anything the model is told
// of the cut must reach it after the carrier has dropped the audio.
func (c *Call) clearPlayback(ctx context.Context) (itemID string, playedMs int64, cleared bool, err error) {
	c.mu.Lock()
	if c.itemID == "" || c.sentBytes == 0 || c.playedBytes >= c.sentBytes {
		c.mu.Unlock()
		return "", 0, false, nil
	}
	itemID, playedMs = c.itemID, c.playedBytes/8
	c.gen++ // echoes of marks cleared now mean dropped, not played
	c.itemID, c.sentBytes, c.markedBytes, c.playedBytes = "", 0, 0, 0
	c.mu.Unlock()

	if ctx.Err() != nil {
		return "", 0, false, context.Cause(ctx)
	}
	// The recorder cuts the agent's side before the carrier can hear of
	// the clear, so that no caller frame sent after it is recorded before
	// the cut.
	if r := c.opts.Recorder; r != nil {
		r.Clear()
	}
	seq, err := c.carrierOut.send(func(b *batch) { b.data = appendClear(b.data, c.opts.StreamSID); b.end() })
	if err == nil {
		err = c.carrierOut.wait(seq)
	}
	if err != nil {
		return "", 0, false, sendErr(ctx, err, EndCarrierDisconnect)
	}
	return itemID, playedMs, true, nil
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
