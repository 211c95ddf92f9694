package geminilivefake

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// OutputMIME is the MIME type of the model's audio: 16-bit PCM at 24 kHz.
const OutputMIME = "audio/pcm;rate=24000"

// Send writes one server message (marshaled to JSON) to the client, in a
// binary frame as the service does.
func (ss *Session) Send(ctx context.Context, msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return ss.SendRaw(ctx, b)
}

// SendRaw writes one server message as given.
func (ss *Session) SendRaw(ctx context.Context, msg []byte) error {
	if !ss.server.Echo {
		ss.mu.Lock()
		ss.sent = append(ss.sent, msg)
		ss.mu.Unlock()
	}
	return ss.conn.Write(ctx, websocket.MessageBinary, msg)
}

type obj = map[string]any

func (ss *Session) serverContent(ctx context.Context, content obj) error {
	return ss.Send(ctx, obj{"serverContent": content})
}

// SendAudio sends model audio (16-bit LE PCM at 24 kHz) as one modelTurn
// part of inline data.
func (ss *Session) SendAudio(ctx context.Context, pcm []byte) error {
	part := obj{"inlineData": obj{"mimeType": OutputMIME, "data": base64.StdEncoding.EncodeToString(pcm)}}
	return ss.serverContent(ctx, obj{"modelTurn": obj{"parts": []any{part}}})
}

// SendInterrupted says the caller's speech interrupted the model's turn.
func (ss *Session) SendInterrupted(ctx context.Context) error {
	return ss.serverContent(ctx, obj{"interrupted": true})
}

// SendTurnComplete ends the model's turn.
func (ss *Session) SendTurnComplete(ctx context.Context) error {
	return ss.serverContent(ctx, obj{"turnComplete": true})
}

// SendInputTranscription sends a piece of the transcript of the caller's
// speech.
func (ss *Session) SendInputTranscription(ctx context.Context, text string) error {
	return ss.serverContent(ctx, obj{"inputTranscription": obj{"text": text}})
}

// SendOutputTranscription sends a piece of the transcript of the model's
// speech.
func (ss *Session) SendOutputTranscription(ctx context.Context, text string) error {
	return ss.serverContent(ctx, obj{"outputTranscription": obj{"text": text}})
}

// FunctionCall is one call of a toolCall message.
type FunctionCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args any    `json:"args"`
}

// SendToolCall asks the client to run function calls.
func (ss *Session) SendToolCall(ctx context.Context, calls ...FunctionCall) error {
	return ss.Send(ctx, obj{"toolCall": obj{"functionCalls": calls}})
}

// SendToolCallCancellation withdraws earlier function calls.
func (ss *Session) SendToolCallCancellation(ctx context.Context, ids ...string) error {
	return ss.Send(ctx, obj{"toolCallCancellation": obj{"ids": ids}})
}

// SendGoAway warns that the connection ends in timeLeft (a protobuf
// Duration in JSON: seconds with an "s").
func (ss *Session) SendGoAway(ctx context.Context, timeLeft time.Duration) error {
	return ss.Send(ctx, obj{"goAway": obj{"timeLeft": strconv.FormatFloat(timeLeft.Seconds(), 'f', -1, 64) + "s"}})
}

// SendResumptionUpdate sends a sessionResumptionUpdate as given (the
// service sends resumable false with no handle while the model generates
// or runs tools).
func (ss *Session) SendResumptionUpdate(ctx context.Context, handle string, resumable bool) error {
	u := obj{"resumable": resumable}
	if handle != "" {
		u["newHandle"] = handle
	}
	return ss.Send(ctx, obj{"sessionResumptionUpdate": u})
}

// IssueHandle sends a new resumable handle, which a later setup may
// resume, and returns it.
func (ss *Session) IssueHandle(ctx context.Context) (string, error) {
	h := ss.server.issueHandle()
	return h, ss.SendResumptionUpdate(ctx, h, true)
}

// Tone is d of a 440 Hz tone as 16-bit LE PCM at 24 kHz (3·8·d/ms
// samples of it become d·8/ms mu-law bytes at 8 kHz).
func Tone(d time.Duration) []byte {
	n := int(24 * d.Milliseconds())
	b := make([]byte, 2*n)
	// A square-ish wave keeps this free of math: the resampler's test
	// has the quality measures; here only lengths and flow count.
	for i := range n {
		v := int16(6000)
		if (i/27)%2 == 1 {
			v = -6000
		}
		b[2*i], b[2*i+1] = byte(v), byte(uint16(v)>>8)
	}
	return b
}
