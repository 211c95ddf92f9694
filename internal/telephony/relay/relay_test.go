package relay_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/relay"
)

const apiKey = "sk-test"

// rig is one call: a fake carrier client, the relay behind a WebSocket
// handler, and a fake realtime model, all on loopback.
type rig struct {
	t       *testing.T
	ctx     context.Context
	model   *realtimefake.Session
	carrier *websocket.Conn
	result  chan relay.Result
	call    chan *relay.Call
	events  chan relay.Event
	// returned is set once Run has returned; lateEvents counts the events
	// reported after that (the call's log has stopped by then).
	returned   atomic.Bool
	lateEvents atomic.Int32
}

type rigOptions struct {
	tools      relay.Tools
	speakFirst bool
	recorder   relay.Recorder
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	fake := realtimefake.New(apiKey)
	t.Cleanup(fake.Close)
	r := &rig{t: t, ctx: ctx, result: make(chan relay.Result, 1), call: make(chan *relay.Call, 1), events: make(chan relay.Event, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		carrier, err := relay.Accept(w, req, nil)
		if err != nil {
			return
		}
		// connected, then start, as Twilio sends them.
		var start struct {
			Start struct {
				StreamSID string `json:"streamSid"`
			} `json:"start"`
		}
		for range 2 {
			_, msg, err := carrier.Read(ctx)
			if err != nil {
				return
			}
			json.Unmarshal(msg, &start)
		}
		model, _, err := relay.Dial(ctx, realtimefake.WSURL(fake.URL(), "gpt-realtime"), &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + apiKey}},
		})
		if err != nil {
			t.Errorf("dial model: %v", err)
			return
		}
		opts := relay.Options{
			StreamSID:     start.Start.StreamSID,
			SessionUpdate: []byte(`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcmu"}},"output":{"format":{"type":"audio/pcmu"}}}}}`),
			Tools:         o.tools,
			OnEvent: func(e relay.Event) {
				if r.returned.Load() {
					r.lateEvents.Add(1)
				}
				r.events <- e
			},
			EndDelayLimit: 5 * time.Second,
			Recorder:      o.recorder,
		}
		if o.speakFirst {
			opts.SpeakFirst = []byte(`{"type":"response.create"}`)
		}
		c := relay.New(carrier, model, opts)
		r.call <- c
		res := c.Run(context.Background())
		r.returned.Store(true)
		r.result <- res
	}))
	t.Cleanup(srv.Close)
	carrier, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	carrier.SetReadLimit(1 << 20)
	t.Cleanup(func() { carrier.CloseNow() })
	r.carrier = carrier
	r.send(`{"event":"connected","protocol":"Call","version":"1.0.0"}`)
	r.send(`{"event":"start","sequenceNumber":"1","streamSid":"MZ1","start":{"streamSid":"MZ1","accountSid":"AC1","callSid":"CA1","tracks":["inbound"],"customParameters":{},"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}}`)
	if r.model, err = fake.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.model.WaitType(ctx, "session.update"); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) send(msg string) {
	r.t.Helper()
	if err := r.carrier.Write(r.ctx, websocket.MessageText, []byte(msg)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) sendFrame(seq int, payload string) {
	r.send(fmt.Sprintf(`{"event":"media","sequenceNumber":"%d","streamSid":"MZ1","media":{"track":"inbound","chunk":"%d","timestamp":"%d","payload":"%s"}}`, seq+1, seq, seq*20, payload))
}

func (r *rig) modelSend(ev any) {
	r.t.Helper()
	if err := r.model.Send(r.ctx, ev); err != nil {
		r.t.Fatal(err)
	}
}

// carrierMsg is a message the relay sent to the carrier.
type carrierMsg struct {
	Event     string `json:"event"`
	StreamSID string `json:"streamSid"`
	Media     struct {
		Payload string `json:"payload"`
	} `json:"media"`
	Mark struct {
		Name string `json:"name"`
	} `json:"mark"`
}

func (r *rig) readCarrier() carrierMsg {
	r.t.Helper()
	_, b, err := r.carrier.Read(r.ctx)
	if err != nil {
		r.t.Fatalf("carrier read: %v", err)
	}
	var m carrierMsg
	if err := json.Unmarshal(b, &m); err != nil {
		r.t.Fatalf("carrier got invalid JSON %q", b)
	}
	if m.StreamSID != "MZ1" {
		r.t.Fatalf("carrier message without the stream SID: %s", b)
	}
	return m
}

func (r *rig) waitResult() relay.Result {
	r.t.Helper()
	select {
	case res := <-r.result:
		return res
	case <-time.After(5 * time.Second):
		buf := make([]byte, 1<<20)
		r.t.Fatalf("relay did not end:\n%s", buf[:runtime.Stack(buf, true)])
		return relay.Result{}
	}
}

func randomFrame(rng *rand.Rand) string {
	b := make([]byte, 160) // 20 ms of 8 kHz mu-law
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return base64.StdEncoding.EncodeToString(b)
}

func delta(item string, ms int, rng *rand.Rand) map[string]any {
	b := make([]byte, ms*8)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return map[string]any{"type": "response.output_audio.delta", "response_id": "resp_1", "item_id": item, "output_index": 0, "content_index": 0, "delta": base64.StdEncoding.EncodeToString(b)}
}

func TestCallerAudioReachesTheModelByteIdenticalAndInOrder(t *testing.T) {
	r := newRig(t, rigOptions{})
	rng := rand.New(rand.NewPCG(1, 2))
	var sent []string
	for i := range 500 {
		p := randomFrame(rng)
		sent = append(sent, p)
		r.sendFrame(i, p)
		if i == 49 {
			// Frames before session.updated are held (up to 2 s of them,
			// as a real carrier sends them). A busy machine may answer
			// session.update late, so wait until those went out before
			// the rest come far faster than real time.
			if _, err := r.model.WaitAudio(r.ctx, 50); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := r.model.WaitAudio(r.ctx, len(sent))
	if err != nil {
		t.Fatal(err)
	}
	for i := range sent {
		if got[i] != sent[i] {
			t.Fatalf("frame %d differs", i)
		}
	}
	if ev := r.model.Events(); ev[0].Type != "session.update" {
		t.Fatalf("first model event = %s", ev[0].Type)
	}
	r.send(`{"event":"stop","sequenceNumber":"999","streamSid":"MZ1","stop":{"accountSid":"AC1","callSid":"CA1"}}`)
	res := r.waitResult()
	if res.Reason != relay.EndCallerHangup || res.CallerFrames != 500 {
		t.Fatalf("result = %+v", res)
	}
	if !r.model.WaitDone(time.Second) {
		t.Fatal("model socket still open a second after stop")
	}
}

func TestModelAudioReachesTheCallerWithMarksPerBatch(t *testing.T) {
	r := newRig(t, rigOptions{})
	rng := rand.New(rand.NewPCG(3, 4))
	var sent []string
	for range 20 { // 20 deltas of 50 ms = 1 s: a mark after every 200 ms
		d := delta("item_a", 50, rng)
		sent = append(sent, d["delta"].(string))
		r.modelSend(d)
	}
	r.modelSend(map[string]any{"type": "response.output_audio.done", "item_id": "item_a"})
	var media []string
	var marks []string
	for len(media) < len(sent) || len(marks) < 5 {
		m := r.readCarrier()
		switch m.Event {
		case "media":
			media = append(media, m.Media.Payload)
		case "mark":
			marks = append(marks, m.Mark.Name)
		default:
			t.Fatalf("unexpected %s", m.Event)
		}
	}
	for i := range sent {
		if media[i] != sent[i] {
			t.Fatalf("delta %d differs", i)
		}
	}
	if len(marks) != 5 || !strings.HasSuffix(marks[4], ":8000") {
		t.Fatalf("marks = %v, want 5 ending at 8000 bytes", marks)
	}
}

func TestBargeInClearsAndTruncatesAtThePlayedPosition(t *testing.T) {
	r := newRig(t, rigOptions{})
	rng := rand.New(rand.NewPCG(5, 6))
	for range 10 { // 10 x 100 ms
		r.modelSend(delta("item_b", 100, rng))
	}
	// Echo the first two marks only: 400 ms have played.
	var marks []string
	for len(marks) < 2 {
		if m := r.readCarrier(); m.Event == "mark" {
			marks = append(marks, m.Mark.Name)
			r.send(fmt.Sprintf(`{"event":"mark","sequenceNumber":"5","streamSid":"MZ1","mark":{"name":%q}}`, m.Mark.Name))
		}
	}
	// A DTMF digit after the echoes is a barrier: once the model has its
	// text item, the relay has taken the echoes in. Then the caller speaks.
	r.send(`{"event":"dtmf","streamSid":"MZ1","dtmf":{"digit":"1"}}`)
	if _, err := r.model.WaitType(r.ctx, "conversation.item.create"); err != nil {
		t.Fatal(err)
	}
	r.modelSend(map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": 1000, "item_id": "item_user"})
	for {
		m := r.readCarrier()
		if m.Event == "clear" {
			break
		}
	}
	ev, err := r.model.WaitType(r.ctx, "conversation.item.truncate")
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		ItemID       string `json:"item_id"`
		ContentIndex int    `json:"content_index"`
		AudioEndMs   int    `json:"audio_end_ms"`
	}
	json.Unmarshal(ev.Raw, &tr)
	if tr.ItemID != "item_b" || tr.AudioEndMs != 400 || tr.ContentIndex != 0 {
		t.Fatalf("truncate = %+v, want item_b at 400 ms", tr)
	}
	// A second speech_started with nothing playing sends nothing more.
	r.modelSend(map[string]any{"type": "input_audio_buffer.speech_started", "item_id": "item_user2"})
	r.modelSend(delta("item_c", 20, rng))
	if m := r.readCarrier(); m.Event != "media" {
		t.Fatalf("after barge-in got %s, want the next item's media", m.Event)
	}
}

// blockingTools answers every call once released, recording the calls.
type blockingTools struct {
	release chan struct{}
	mu      sync.Mutex
	calls   []agentline.ToolCall
}

func (b *blockingTools) Execute(ctx context.Context, call agentline.ToolCall) (agentline.ToolResult, error) {
	b.mu.Lock()
	b.calls = append(b.calls, call)
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-ctx.Done():
		return agentline.ToolResult{}, ctx.Err()
	}
	return agentline.ToolResult{CallID: call.CallID, Output: `{"open":"9 to 5"}`}, nil
}

func TestToolCallRoundTripWhileAudioFlows(t *testing.T) {
	tools := &blockingTools{release: make(chan struct{})}
	r := newRig(t, rigOptions{tools: tools})
	rng := rand.New(rand.NewPCG(7, 8))
	r.modelSend(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_2"}})
	r.modelSend(map[string]any{"type": "response.function_call_arguments.done", "response_id": "resp_2", "item_id": "fc_1", "call_id": "call_1", "name": "opening_hours", "arguments": `{"day":"monday"}`})
	// While the tool runs, caller audio still reaches the model.
	for i := range 50 {
		r.sendFrame(i, randomFrame(rng))
	}
	if _, err := r.model.WaitAudio(r.ctx, 50); err != nil {
		t.Fatal(err)
	}
	r.modelSend(map[string]any{"type": "response.done", "response": map[string]any{"id": "resp_2", "status": "completed"}})
	close(tools.release)
	out, err := r.model.WaitType(r.ctx, "conversation.item.create")
	if err != nil {
		t.Fatal(err)
	}
	var item struct {
		Item struct{ Type, CallID, Output string } `json:"item"`
	}
	json.Unmarshal(out.Raw, &item)
	if item.Item.Type != "function_call_output" || item.Item.Output != `{"open":"9 to 5"}` {
		t.Fatalf("output item = %s", out.Raw)
	}
	if _, err := r.model.WaitType(r.ctx, "response.create"); err != nil {
		t.Fatal(err)
	}
	if len(tools.calls) != 1 || string(tools.calls[0].Arguments) != `{"day":"monday"}` || tools.calls[0].CallID != "call_1" {
		t.Fatalf("tool calls = %+v", tools.calls)
	}
	// The output came before the response.create, and only one was sent.
	var order []string
	for _, e := range r.model.Events() {
		if e.Type == "conversation.item.create" || e.Type == "response.create" {
			order = append(order, e.Type)
		}
	}
	if strings.Join(order, ",") != "conversation.item.create,response.create" {
		t.Fatalf("order = %v", order)
	}
}

func TestSpeakFirstComesBeforeAnyCallerAudio(t *testing.T) {
	r := newRig(t, rigOptions{speakFirst: true})
	r.sendFrame(0, randomFrame(rand.New(rand.NewPCG(1, 1))))
	if _, err := r.model.WaitAudio(r.ctx, 1); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range r.model.Events() {
		types = append(types, e.Type)
	}
	if strings.Join(types, ",") != "session.update,response.create,input_audio_buffer.append" {
		t.Fatalf("model saw %v", types)
	}
}

func TestDTMFReachesTheModelAsText(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.send(`{"event":"dtmf","sequenceNumber":"5","streamSid":"MZ1","dtmf":{"track":"inbound_track","digit":"7"}}`)
	ev, err := r.model.WaitType(r.ctx, "conversation.item.create")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ev.Raw), "pressed 7") {
		t.Fatalf("item = %s", ev.Raw)
	}
	if _, err := r.model.WaitType(r.ctx, "response.create"); err != nil {
		t.Fatal(err)
	}
}

func TestEndings(t *testing.T) {
	t.Run("model drops", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		r.model.Drop()
		res := r.waitResult()
		if res.Reason != relay.EndModelDisconnect {
			t.Fatalf("reason = %s", res.Reason)
		}
		if _, _, err := r.carrier.Read(r.ctx); err == nil {
			t.Fatal("carrier socket still open")
		}
	})
	t.Run("carrier drops without stop", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		r.carrier.CloseNow()
		if res := r.waitResult(); res.Reason != relay.EndCarrierDisconnect {
			t.Fatalf("reason = %s", res.Reason)
		}
		if !r.model.WaitDone(time.Second) {
			t.Fatal("model socket still open")
		}
	})
	t.Run("ended from outside", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		c := <-r.call
		c.End(fmt.Errorf("ended by API"))
		res := r.waitResult()
		if res.Reason != relay.EndCanceled || res.Err == nil || res.Err.Error() != "ended by API" {
			t.Fatalf("result = %+v", res)
		}
		if !r.model.WaitDone(time.Second) {
			t.Fatal("model socket still open")
		}
	})
	t.Run("end_call after the last words played", func(t *testing.T) {
		r := newRig(t, rigOptions{})
		rng := rand.New(rand.NewPCG(9, 9))
		r.modelSend(map[string]any{"type": "response.created"})
		r.modelSend(delta("item_bye", 100, rng))
		r.modelSend(map[string]any{"type": "response.output_audio.done", "item_id": "item_bye"})
		r.modelSend(map[string]any{"type": "response.function_call_arguments.done", "call_id": "call_e", "name": "end_call", "arguments": "{}"})
		r.modelSend(map[string]any{"type": "response.done"})
		var mark string
		for mark == "" {
			if m := r.readCarrier(); m.Event == "mark" {
				mark = m.Mark.Name
			}
		}
		select {
		case res := <-r.result:
			t.Fatalf("ended before the goodbye played: %+v", res)
		case <-time.After(200 * time.Millisecond):
		}
		r.send(fmt.Sprintf(`{"event":"mark","streamSid":"MZ1","mark":{"name":%q}}`, mark))
		if res := r.waitResult(); res.Reason != relay.EndAgentHangup {
			t.Fatalf("reason = %s", res.Reason)
		}
		for _, e := range r.model.Events() {
			if e.Type == "response.create" {
				t.Fatal("a response.create was sent after end_call")
			}
		}
	})
}

// TestNoGoroutineLeaks runs calls to every ending and checks that the
// goroutine count comes back.
func TestNoGoroutineLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("calls", func(t *testing.T) {
		for range 5 {
			r := newRig(t, rigOptions{})
			r.send(`{"event":"stop","streamSid":"MZ1","stop":{}}`)
			r.waitResult()
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}
