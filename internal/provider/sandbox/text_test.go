package sandbox

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
)

// A text session (a client secret with output_modalities ["text"]) over
// WebRTC, as the SDK opens it: a data channel and an audio m-line it only
// receives on, no microphone. The sandbox says nothing until the visitor
// writes, then answers at once in output_text events (at the sandbox's
// real pace), calls the agent's tool, and never sends audio or a line
// about audio packets.
func TestTextCallOverWebRTC(t *testing.T) {
	s, srv := newSandbox(t)
	s.pause = 400 * time.Millisecond // the pace of `serve --sandbox`
	secret := newSecret(t, srv.URL, `{"type":"realtime","model":"gpt-realtime","output_modalities":["text"],"tools":[{"type":"function","name":"lookup_order","parameters":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}]}`)

	pc, err := webrtc.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeAudio, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
		t.Fatal(err)
	}
	var audio atomic.Int64
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			if _, _, err := tr.ReadRTP(); err != nil {
				return
			}
			audio.Add(1)
		}
	})
	events := make(chan map[string]any, 256)
	opened := make(chan struct{})
	dc, _ := pc.CreateDataChannel("oai-events", nil)
	dc.OnOpen(func() { close(opened) })
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		var ev map[string]any
		json.Unmarshal(m.Data, &ev)
		events <- ev
	})
	offer, _ := pc.CreateOffer(nil)
	gathered := webrtc.GatheringCompletePromise(pc)
	pc.SetLocalDescription(offer)
	<-gathered
	status, answer := post(t, srv.URL+"/v1/realtime/calls", secret, "application/sdp", pc.LocalDescription().SDP)
	if status != 201 {
		t.Fatalf("calls: %d %s", status, answer)
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the data channel did not open")
	}
	send := func(v any) {
		b, _ := json.Marshal(v)
		if err := dc.SendText(string(b)); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(20 * time.Second)
	next := func() map[string]any {
		select {
		case ev := <-events:
			return ev
		case <-timeout:
			t.Fatal("timed out")
		}
		return nil
	}
	var seen []string
	// Before the visitor writes: the session, and nothing said.
	if ev := next(); ev["type"] != "session.created" {
		t.Fatalf("first event %v", ev)
	}
	select {
	case ev := <-events:
		t.Fatalf("the sandbox spoke first in a text session: %v", ev)
	case <-time.After(3 * s.pause):
	}

	send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Where is my order?"}}}})
	send(map[string]any{"type": "response.create"})
	sent := time.Now()
	var first time.Duration
	var texts []string
	for len(texts) < 2 {
		ev := next()
		typ, _ := ev["type"].(string)
		seen = append(seen, typ)
		switch typ {
		case "response.output_text.delta":
			if first == 0 {
				first = time.Since(sent)
			}
		case "response.output_text.done":
			texts = append(texts, ev["text"].(string))
		case "response.function_call_arguments.done":
			if ev["name"] != "lookup_order" || ev["arguments"] != `{"id":"42"}` {
				t.Errorf("function call %v", ev)
			}
			send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "function_call_output", "call_id": ev["call_id"], "output": "Order 42 shipped"}})
			send(map[string]any{"type": "response.create"})
		}
	}
	if first == 0 || first > s.pause/2 {
		t.Errorf("the answer began %v after the message, want at once", first)
	}
	if texts[0] != "You wrote \u201cWhere is my order?\u201d. In the sandbox I can only repeat it." || texts[1] != "The tool answered: Order 42 shipped" {
		t.Errorf("answers %q", texts)
	}
	for _, typ := range seen {
		if strings.Contains(typ, "audio") || typ == "conversation.item.input_audio_transcription.completed" {
			t.Errorf("a text session sent %s; events %v", typ, seen)
		}
	}
	if n := audio.Load(); n != 0 {
		t.Errorf("a text session sent %d RTP packets", n)
	}
	if got := s.Messages(); len(got) != 1 || got[0] != "Where is my order?" {
		t.Errorf("messages %q", got)
	}
}
