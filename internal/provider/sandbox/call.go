package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentline/agentline"
)

// call is one scripted conversation with the sandbox, over either
// transport: a browser's WebRTC session (events on the "oai-events" data
// channel, audio on an RTP track) or a realtime WebSocket (events and base64
// mu-law audio deltas on one socket, as the phone relay uses it).
type call struct {
	id      string
	srv     *Server
	session sessionConfig
	log     *slog.Logger
	ctx     context.Context
	cancel  context.CancelFunc
	in      chan map[string]any
	heard   atomic.Int64 // audio packets (RTP) or appends (WebSocket) received
	// turnOver is set when the caller's speech stopped (the WebSocket
	// path's voice activity detection, after its speech_stopped event):
	// there, like the real service, the script answers once the caller's
	// turn is over, so its report never overtakes that event.
	turnOver atomic.Bool
	spoke    atomic.Bool // the script's first words have begun
	seq      atomic.Int64
	once     sync.Once

	// The transport: out sends one event (nil when it cannot yet); speak
	// plays d of the voice for an item of a response; hangUp closes it.
	out    func([]byte) error
	speak  func(respID, itemID string, d time.Duration)
	hangUp func()
	// webrtc: the output_audio_buffer.* events exist only there.
	webrtc bool
	// text: the session answers in text only (output_modalities ["text"]):
	// no greeting, no audio, no report of audio heard; each typed message
	// is answered at once with output_text events.
	text bool
	// toolFirst: a text session on the realtime WebSocket answers the
	// first message with the function call, then with the sentence that
	// quotes both the message and the tool's output, as a model that
	// looks something up before it answers.
	toolFirst bool
	// greeting is the agent's, when the client asked for it before the
	// script's first words (the phone path's first response.create).
	greeting atomic.Pointer[string]
}

// sandboxHello is what the sandbox says first when no greeting was asked for.
const sandboxHello = "Hello! This is the agentline sandbox. I can't understand speech, but I can show you how a conversation looks."

// takeGreeting keeps the greeting a response.create asks for, if it does
// and nothing has been said yet; false leaves the event to the script.
func (c *call) takeGreeting(ev map[string]any) bool {
	resp, _ := ev["response"].(map[string]any)
	instructions, _ := resp["instructions"].(string)
	g, ok := agentline.GreetingOf(instructions)
	if !ok || c.spoke.Load() {
		return false
	}
	c.greeting.Store(&g)
	return true
}

func (c *call) close() {
	c.once.Do(func() {
		c.cancel()
		c.hangUp()
		c.srv.mu.Lock()
		delete(c.srv.calls, c)
		c.srv.mu.Unlock()
	})
}

func (c *call) next(prefix string) string {
	return fmt.Sprintf("%s_%s_%d", prefix, c.id[4:12], c.seq.Add(1))
}

func (c *call) send(ev map[string]any) {
	if ev["event_id"] == nil {
		ev["event_id"] = c.next("event")
	}
	b, _ := json.Marshal(ev)
	if err := c.out(b); err != nil {
		c.log.Debug("sandbox: send", "err", err)
	}
}

// sessionCreated is the first event of every session.
func (c *call) sessionCreated() {
	modalities := []string{"audio"}
	if c.text {
		modalities = []string{"text"}
	}
	c.send(map[string]any{"type": "session.created", "session": map[string]any{
		"id": "sess_" + c.id[4:], "object": "realtime.session", "type": "realtime", "model": c.session.Model,
		"output_modalities": modalities}})
}

// sessionUpdated answers a client's session.update on the data channel:
// the session as updated, as the real service does (OpenAI's Agents SDK
// waits for it before its connect resolves). The sandbox's script stays
// what the client secret set.
func (c *call) sessionUpdated(ev map[string]any) {
	session, _ := ev["session"].(map[string]any)
	out := map[string]any{"id": "sess_" + c.id[4:], "object": "realtime.session", "type": "realtime", "model": c.session.Model}
	for k, v := range session {
		if k != "id" && k != "object" {
			out[k] = v
		}
	}
	c.send(map[string]any{"type": "session.updated", "session": out})
}

// wait pauses for n script units; false when the call ended.
func (c *call) wait(n float64) bool {
	select {
	case <-c.ctx.Done():
		return false
	case <-time.After(time.Duration(n * float64(c.srv.pause))):
		return true
	}
}

// run is the scripted conversation, in the GA event names of OpenAI's
// realtime API. A spoken session opens with a greeting, the report of the
// audio heard and the function call; a text session waits for the
// visitor's first message, answers it, then makes the function call.
func (c *call) run() {
	callID := ""
	if !c.text {
		if !c.open() {
			return
		}
		callID = c.firstTool()
	}
	// Answer tool outputs and text messages until the call ends.
	var output *string
	var text, asked string
	for {
		var ev map[string]any
		select {
		case <-c.ctx.Done():
			return
		case ev = <-c.in:
		}
		switch ev["type"] {
		case "conversation.item.create":
			item, _ := ev["item"].(map[string]any)
			switch item["type"] {
			case "function_call_output":
				if id, _ := item["call_id"].(string); id == callID && callID != "" {
					o, _ := item["output"].(string)
					output = &o
					select {
					case c.srv.toolOutputs <- o:
					default:
					}
				}
			case "message":
				// An assistant's item is history a client gives a new
				// session; only the visitor's words are answered.
				if item["role"] == "user" {
					text = firstText(item)
				}
			}
		case "response.create":
			switch {
			case output != nil && asked != "":
				c.say("You wrote \u201c" + clip(asked, 300) + "\u201d. The tool answered: " + clip(*output, 300))
				output, callID, asked = nil, "", ""
			case output != nil:
				c.say("The tool answered: " + clip(*output, 300))
				output, callID = nil, ""
			case text != "" && c.toolFirst && !c.spoke.Swap(true):
				if callID = c.firstTool(); callID == "" {
					c.say("You wrote \u201c" + clip(text, 300) + "\u201d. In the sandbox I can only repeat it.")
				} else {
					asked = text
				}
				text = ""
			case text != "":
				c.say("You wrote \u201c" + clip(text, 300) + "\u201d. In the sandbox I can only repeat it.")
				text = ""
				if c.text && !c.spoke.Swap(true) {
					callID = c.firstTool()
				}
			}
		}
	}
}

// open is the start of a spoken session: the greeting, then what the
// visitor "said": the sandbox reports how much audio arrived. False when
// the call ended meanwhile.
func (c *call) open() bool {
	if !c.wait(1) {
		return false
	}
	first := sandboxHello
	if g := c.greeting.Load(); g != nil {
		first = *g
	}
	c.spoke.Store(true)
	c.say(first)
	deadline := time.Now().Add(8 * c.srv.pause)
	for (c.heard.Load() < 25 || (!c.webrtc && !c.turnOver.Load())) && time.Now().Before(deadline) {
		if !c.wait(0.25) {
			return false
		}
	}
	if c.webrtc {
		// As the service's voice activity detection would (the WebSocket
		// path's own detection has sent it): the visitor's turn ended (20 ms
		// packets), which the SDK times its answer's audio from.
		c.send(map[string]any{"type": "input_audio_buffer.speech_stopped", "audio_end_ms": c.heard.Load() * 20, "item_id": c.next("item")})
	}
	c.send(map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": c.next("item"),
		"content_index": 0, "transcript": fmt.Sprintf("(sandbox: %d audio packets received from your microphone)", c.heard.Load())})
	return true
}

// firstTool calls the agent's first tool (none of the phone's own) with
// sample arguments, and returns the call id ("" without tools).
func (c *call) firstTool() string {
	for _, tool := range c.session.Tools {
		if !phoneOnlyTool[tool.Name] {
			return c.callTool(tool.Name, exampleArguments(tool.Name, tool.Parameters))
		}
	}
	return ""
}

// say speaks a sentence: audio while transcript deltas stream, then the
// done events. In a text session it writes it instead.
func (c *call) say(sentence string) {
	respID, itemID := c.next("resp"), c.next("item")
	c.send(map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "status": "in_progress"}})
	if c.text {
		c.write(respID, itemID, sentence)
		return
	}
	if c.webrtc {
		c.send(map[string]any{"type": "output_audio_buffer.started", "response_id": respID})
	}
	words := strings.Fields(sentence)
	c.speak(respID, itemID, time.Duration(len(words))*c.srv.pause/4)
	for i, w := range words {
		if i > 0 {
			w = " " + w
		}
		c.send(map[string]any{"type": "response.output_audio_transcript.delta", "response_id": respID, "item_id": itemID, "delta": w})
		if !c.wait(0.25) {
			return
		}
	}
	c.send(map[string]any{"type": "response.output_audio_transcript.done", "response_id": respID, "item_id": itemID, "transcript": sentence})
	if c.webrtc {
		c.send(map[string]any{"type": "output_audio_buffer.stopped", "response_id": respID})
	}
	c.send(map[string]any{"type": "response.done", "response": map[string]any{"id": respID, "status": "completed"}})
}

// write answers a sentence as text: output_text deltas, quickly, as a
// model writes, then the done events.
func (c *call) write(respID, itemID string, sentence string) {
	for i, w := range strings.Fields(sentence) {
		if i > 0 {
			w = " " + w
		}
		c.send(map[string]any{"type": "response.output_text.delta", "response_id": respID, "item_id": itemID,
			"output_index": 0, "content_index": 0, "delta": w})
		if !c.wait(0.05) {
			return
		}
	}
	c.send(map[string]any{"type": "response.output_text.done", "response_id": respID, "item_id": itemID,
		"output_index": 0, "content_index": 0, "text": sentence})
	c.send(map[string]any{"type": "response.done", "response": map[string]any{"id": respID, "status": "completed", "output_modalities": []string{"text"}}})
}

// phoneOnlyTool names the tools the phone relay adds to calls (end_call to
// every call, transfer_call with a transfer number, opt_out to campaign
// calls): the scripted function call must not hang up, transfer the call
// or put the number on the do-not-call list.
var phoneOnlyTool = map[string]bool{"end_call": true, "transfer_call": true, "opt_out": true}

// callTool raises a function call and returns its call id.
func (c *call) callTool(name, args string) string {
	respID, itemID, callID := c.next("resp"), c.next("item"), c.next("call")
	c.send(map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "status": "in_progress"}})
	c.send(map[string]any{"type": "response.output_item.added", "response_id": respID, "output_index": 0,
		"item": map[string]any{"id": itemID, "type": "function_call", "call_id": callID, "name": name, "arguments": ""}})
	c.send(map[string]any{"type": "response.function_call_arguments.done", "response_id": respID, "item_id": itemID,
		"output_index": 0, "call_id": callID, "name": name, "arguments": args})
	c.send(map[string]any{"type": "response.done", "response": map[string]any{"id": respID, "status": "completed",
		"output": []any{map[string]any{"id": itemID, "type": "function_call", "call_id": callID, "name": name, "arguments": args}}}})
	return callID
}

// exampleArguments fills a tool's required parameters with sample values.
func exampleArguments(name string, schema json.RawMessage) string {
	if name == "search_knowledge_base" {
		return `{"query":"opening hours"}`
	}
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &s)
	args := map[string]any{}
	for _, p := range s.Required {
		switch s.Properties[p].Type {
		case "integer", "number":
			args[p] = 42
		case "boolean":
			args[p] = true
		default:
			args[p] = "42"
		}
	}
	b, _ := json.Marshal(args)
	return string(b)
}

// Messages are the texts of the user message items browsers sent
// (conversation.item.create), in order: typed lines, and the earlier lines
// of a conversation that continues in a new session.
func (s *Server) Messages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.messages...)
}

// noteMessage keeps the text of a user message item, for Messages.
func (s *Server) noteMessage(ev map[string]any) {
	item, _ := ev["item"].(map[string]any)
	if ev["type"] != "conversation.item.create" || item["type"] != "message" || item["role"] != "user" {
		return
	}
	s.mu.Lock()
	s.messages = append(s.messages, firstText(item))
	s.mu.Unlock()
}

func firstText(item map[string]any) string {
	content, _ := item["content"].([]any)
	for _, part := range content {
		if p, ok := part.(map[string]any); ok {
			if t, ok := p["text"].(string); ok {
				return t
			}
		}
	}
	return ""
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
