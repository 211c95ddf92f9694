package realtimefake

import (
	"context"
	"encoding/json"
	"fmt"
)

// TextReply is a text session's answer to one response.create: a function
// call (Call set) or text.
type TextReply struct {
	Text string
	Call *FunctionCall
}

// FunctionCall is a function call a TextReply makes.
type FunctionCall struct {
	Name, Arguments string
}

// TextInput is what a client gave a text session since its previous
// response.create: the user's message text and the outputs of function
// calls.
type TextInput struct {
	User        string
	ToolOutputs []string
}

// PlayText serves a text session (session.update with output_modalities
// ["text"]) as OpenAI's realtime service does: each response.create is
// answered, from what the client added since the last one, with
// response.created, then either response.output_text.delta/.done or a
// function call (response.output_item.added and
// response.function_call_arguments.done), then response.done whose output
// lists the function call. It returns when the session ends.
func (ss *Session) PlayText(ctx context.Context, reply func(TextInput) TextReply) error {
	up, err := ss.WaitType(ctx, "session.update")
	if err != nil {
		return err
	}
	var u struct {
		Session struct {
			OutputModalities []string `json:"output_modalities"`
		} `json:"session"`
	}
	if json.Unmarshal(up.Raw, &u) != nil || len(u.Session.OutputModalities) != 1 || u.Session.OutputModalities[0] != "text" {
		return fmt.Errorf("session.update did not ask for output_modalities [\"text\"]: %s", up.Raw)
	}
	seen := 0
	for n := 1; ; n++ {
		var in TextInput
		if err := ss.nextCreate(ctx, &seen, &in); err != nil {
			return nil // the session ended
		}
		ss.answer(ctx, n, reply(in))
	}
}

// nextCreate waits for the next response.create after event *seen,
// gathering the items created before it into in.
func (ss *Session) nextCreate(ctx context.Context, seen *int, in *TextInput) error {
	return ss.client.Until(ctx, func() bool {
		for ; *seen < len(ss.events); *seen++ {
			e := ss.events[*seen]
			if e.Type == "response.create" {
				*seen++
				return true
			}
			if e.Type == "conversation.item.create" {
				in.add(e.Raw)
			}
		}
		return false
	})
}

// add records one conversation.item.create.
func (in *TextInput) add(raw []byte) {
	var ev struct {
		Item struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Output  string `json:"output"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return
	}
	switch ev.Item.Type {
	case "function_call_output":
		in.ToolOutputs = append(in.ToolOutputs, ev.Item.Output)
	case "message":
		for _, c := range ev.Item.Content {
			if ev.Item.Role == "user" && c.Type == "input_text" {
				in.User += c.Text
			}
		}
	}
}

// answer sends response n's events.
func (ss *Session) answer(ctx context.Context, n int, r TextReply) {
	resp, item := fmt.Sprintf("resp_%d", n), fmt.Sprintf("item_%d", n)
	ss.Send(ctx, map[string]any{"type": "response.created", "response": map[string]any{"id": resp, "status": "in_progress"}})
	if c := r.Call; c != nil {
		call := fmt.Sprintf("call_%d", n)
		fc := map[string]any{"id": item, "type": "function_call", "call_id": call, "name": c.Name, "arguments": c.Arguments}
		ss.Send(ctx, map[string]any{"type": "response.output_item.added", "response_id": resp, "output_index": 0,
			"item": map[string]any{"id": item, "type": "function_call", "call_id": call, "name": c.Name, "arguments": ""}})
		ss.Send(ctx, map[string]any{"type": "response.function_call_arguments.done", "response_id": resp, "item_id": item,
			"output_index": 0, "call_id": call, "name": c.Name, "arguments": c.Arguments})
		ss.Send(ctx, map[string]any{"type": "response.done", "response": map[string]any{"id": resp, "status": "completed", "output": []any{fc}}})
		return
	}
	half := len(r.Text) / 2
	for _, d := range []string{r.Text[:half], r.Text[half:]} {
		ss.Send(ctx, map[string]any{"type": "response.output_text.delta", "response_id": resp, "item_id": item, "output_index": 0, "content_index": 0, "delta": d})
	}
	ss.Send(ctx, map[string]any{"type": "response.output_text.done", "response_id": resp, "item_id": item, "output_index": 0, "content_index": 0, "text": r.Text})
	ss.Send(ctx, map[string]any{"type": "response.done", "response": map[string]any{"id": resp, "status": "completed", "output_modalities": []string{"text"},
		"output": []any{map[string]any{"id": item, "type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": r.Text}}}}}})
}
