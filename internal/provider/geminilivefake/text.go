package geminilivefake

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TextInput is what a client gave the model since its last answer: a
// person's message (realtimeInput text, or clientContent's user turns
// with turnComplete), or the outputs of the function calls it asked for
// (toolResponse functionResponses[].response, as JSON).
type TextInput struct {
	User        string
	ToolOutputs []string
}

// TextReply is the model's answer to a TextInput: text, or a function
// call (Args a JSON object) whose toolResponse the model then answers.
type TextReply struct {
	Text string
	Call *FunctionCall
}

// PlayText serves the session's turns as the Live service does once it is
// set up, until the client goes: each person's message or toolResponse is
// answered with reply's toolCall, or with its text, as modelTurn text
// parts (a thought part first, which a client shows nobody) in a TEXT
// session, or as model audio with outputTranscription pieces in an AUDIO
// session that asked for outputAudioTranscription; then turnComplete. A
// session that asked for resumption is told, as by the service, that it
// cannot be resumed while the model answers, and gets a new handle after
// each turnComplete.
func (ss *Session) PlayText(ctx context.Context, reply func(TextInput) TextReply) error {
	setup, _ := ss.Setup()
	text := slices.Contains(setup.GenerationConfig.ResponseModalities, "TEXT")
	resumable := setup.SessionResumption != nil
	if !text && setup.OutputAudioTranscription == nil {
		return fmt.Errorf("an AUDIO session without outputAudioTranscription gives a text client nothing to read")
	}
	calls := 0
	for i := 1; ; i++ {
		m, err := ss.nextMessage(ctx, i)
		if err != nil {
			return err
		}
		in, ok := textInput(m)
		if !ok {
			continue
		}
		r := reply(in)
		if resumable {
			if err := ss.SendResumptionUpdate(ctx, "", false); err != nil {
				return err
			}
		}
		if r.Call != nil {
			calls++
			args := r.Call.Args
			if args == nil {
				args = map[string]any{}
			}
			err = ss.SendToolCall(ctx, FunctionCall{ID: fmt.Sprintf("fc-%d", calls), Name: r.Call.Name, Args: args})
		} else if err = ss.answer(ctx, text, r.Text); err == nil && resumable {
			_, err = ss.IssueHandle(ctx)
		}
		if err != nil {
			return err
		}
	}
}

// answer sends one model turn of s in two pieces and ends the turn.
func (ss *Session) answer(ctx context.Context, text bool, s string) error {
	half := len(s) / 2
	for half > 0 && half < len(s) && !strings.HasPrefix(s[half:], " ") {
		half--
	}
	pieces := []string{s[:half], s[half:]}
	if text {
		thought := obj{"text": "Planning the answer.", "thought": true}
		if err := ss.serverContent(ctx, obj{"modelTurn": obj{"parts": []any{thought}}}); err != nil {
			return err
		}
	}
	for _, p := range pieces {
		var err error
		if text {
			err = ss.serverContent(ctx, obj{"modelTurn": obj{"parts": []any{obj{"text": p}}}})
		} else if err = ss.SendAudio(ctx, Tone(40*time.Millisecond)); err == nil {
			err = ss.SendOutputTranscription(ctx, p)
		}
		if err != nil {
			return err
		}
	}
	return ss.SendTurnComplete(ctx)
}

// textInput reads a client message that asks the model to answer.
func textInput(m Message) (TextInput, bool) {
	var in struct {
		RealtimeInput *struct {
			Text string `json:"text"`
		} `json:"realtimeInput"`
		ClientContent *struct {
			Turns []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"turns"`
			TurnComplete bool `json:"turnComplete"`
		} `json:"clientContent"`
		ToolResponse *struct {
			FunctionResponses []struct {
				Response json.RawMessage `json:"response"`
			} `json:"functionResponses"`
		} `json:"toolResponse"`
	}
	if json.Unmarshal(m.Raw, &in) != nil {
		return TextInput{}, false
	}
	switch {
	case in.RealtimeInput != nil && in.RealtimeInput.Text != "":
		return TextInput{User: in.RealtimeInput.Text}, true
	case in.ClientContent != nil && in.ClientContent.TurnComplete:
		var b strings.Builder
		for _, t := range in.ClientContent.Turns {
			for _, p := range t.Parts {
				if t.Role == "user" || t.Role == "" {
					b.WriteString(p.Text)
				}
			}
		}
		return TextInput{User: b.String()}, true
	case in.ToolResponse != nil:
		var out TextInput
		for _, r := range in.ToolResponse.FunctionResponses {
			out.ToolOutputs = append(out.ToolOutputs, string(r.Response))
		}
		return out, true
	}
	return TextInput{}, false
}

// nextMessage waits for the client's i-th message (0 is the setup).
func (ss *Session) nextMessage(ctx context.Context, i int) (Message, error) {
	var m Message
	err := ss.client.Until(ctx, func() bool {
		if i < len(ss.messages) {
			m = ss.messages[i]
		}
		return i < len(ss.messages)
	})
	return m, err
}
