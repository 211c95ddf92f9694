package sandbox

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media"
)

func newSandbox(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	s := New(nil)
	s.pause = 40 * time.Millisecond
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); s.Close() })
	return s, srv
}

func post(t *testing.T, url, auth, contentType, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func newSecret(t *testing.T, base string, session string) string {
	t.Helper()
	status, body := post(t, base+"/v1/realtime/client_secrets", APIKey, "application/json", `{"expires_after":{"anchor":"created_at","seconds":600},"session":`+session+`}`)
	if status != 200 {
		t.Fatalf("client_secrets: %d %s", status, body)
	}
	var out struct {
		Value     string `json:"value"`
		ExpiresAt int64  `json:"expires_at"`
	}
	json.Unmarshal([]byte(body), &out)
	if !strings.HasPrefix(out.Value, "ek_") || out.ExpiresAt <= time.Now().Unix() {
		t.Fatalf("secret %+v", out)
	}
	return out.Value
}

// A page may send OpenAI's Agents SDK header to /v1/realtime/calls.
func TestPreflight(t *testing.T) {
	_, srv := newSandbox(t)
	req, _ := http.NewRequest("OPTIONS", srv.URL+"/v1/realtime/calls", nil)
	req.Header.Set("Origin", "http://127.0.0.1:1")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-openai-agents-sdk")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 204 || !strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "X-OpenAI-Agents-SDK") {
		t.Fatalf("preflight %d %v", res.StatusCode, res.Header)
	}
}

func TestBadRequests(t *testing.T) {
	_, srv := newSandbox(t)
	secret := newSecret(t, srv.URL, `{"type":"realtime","model":"gpt-realtime"}`)
	tests := []struct {
		name, path, auth, body string
		status                 int
	}{
		{"secret without key", "/v1/realtime/client_secrets", "", `{}`, 401},
		{"secret with a wrong key", "/v1/realtime/client_secrets", "sk-real", `{}`, 401},
		{"secret with bad JSON", "/v1/realtime/client_secrets", APIKey, `{`, 400},
		{"call without secret", "/v1/realtime/calls", "", "v=0\r\n", 401},
		{"call with an unknown secret", "/v1/realtime/calls", "ek_nope", "v=0\r\n", 401},
		{"call with the API key instead of a secret", "/v1/realtime/calls", APIKey, "v=0\r\n", 401},
		{"call without SDP", "/v1/realtime/calls", secret, "hello", 400},
		{"call with broken SDP", "/v1/realtime/calls", secret, "v=0\r\nm=broken\r\n", 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if status, body := post(t, srv.URL+tc.path, tc.auth, "application/sdp", tc.body); status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
		})
	}
}

// A pion peer plays the browser: it offers PCMU, sends audio, opens
// oai-events, answers the function call, and sends a text message.
func TestCallOverWebRTC(t *testing.T) {
	s, srv := newSandbox(t)
	secret := newSecret(t, srv.URL, `{"type":"realtime","model":"gpt-realtime","tools":[{"type":"function","name":"lookup_order","parameters":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}]}`)

	pc, err := webrtc.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	mic, _ := webrtc.NewTrackLocalStaticSample(webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000, Channels: 1}, "mic", "browser")
	if _, err := pc.AddTrack(mic); err != nil {
		t.Fatal(err)
	}
	var played atomic.Int64
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			p, _, err := tr.ReadRTP()
			if err != nil {
				return
			}
			for _, b := range p.Payload {
				if b != 0xff && b != 0x7f { // not silence
					played.Add(1)
					break
				}
			}
		}
	})
	events := make(chan map[string]any, 256)
	dc, _ := pc.CreateDataChannel("oai-events", nil)
	dc.OnMessage(func(m webrtc.DataChannelMessage) {
		var ev map[string]any
		json.Unmarshal(m.Data, &ev)
		events <- ev
	})
	offer, _ := pc.CreateOffer(nil)
	gathered := webrtc.GatheringCompletePromise(pc)
	pc.SetLocalDescription(offer)
	<-gathered
	// As OpenAI's Agents SDK posts it: it reads the call id from Location.
	req, _ := http.NewRequest("POST", srv.URL+"/v1/realtime/calls", strings.NewReader(pc.LocalDescription().SDP))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/sdp")
	req.Header.Set("X-OpenAI-Agents-SDK", "openai-agents-sdk.realtime/0.20.0")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	status, answer := res.StatusCode, string(b)
	if status != 201 {
		t.Fatalf("calls: %d %s", status, answer)
	}
	if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/v1/realtime/calls/rtc_") || res.Header.Get("Access-Control-Expose-Headers") != "Location" {
		t.Errorf("Location %q, exposed %q", loc, res.Header.Get("Access-Control-Expose-Headers"))
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the microphone
		silence := bytes.Repeat([]byte{0xff}, 160)
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				mic.WriteSample(media.Sample{Data: silence, Duration: 20 * time.Millisecond})
			}
		}
	}()

	send := func(v any) {
		b, _ := json.Marshal(v)
		if err := dc.SendText(string(b)); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	transcripts := []string{}
	timeout := time.After(20 * time.Second)
	for len(transcripts) < 3 {
		var ev map[string]any
		select {
		case ev = <-events:
		case <-timeout:
			t.Fatalf("timed out; events seen: %v; transcripts %q", seen, transcripts)
		}
		typ, _ := ev["type"].(string)
		seen = append(seen, typ)
		switch typ {
		case "session.created":
			send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "instructions": "be brief"}})
		case "session.updated":
			if sess, _ := ev["session"].(map[string]any); sess["instructions"] != "be brief" || sess["model"] != "gpt-realtime" {
				t.Errorf("session.updated %v", ev)
			}
		case "response.output_audio_transcript.done", "conversation.item.input_audio_transcription.completed":
			transcripts = append(transcripts, ev["transcript"].(string))
		case "response.function_call_arguments.done":
			if ev["name"] != "lookup_order" || ev["arguments"] != `{"id":"42"}` {
				t.Errorf("function call %v", ev)
			}
			send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "function_call_output", "call_id": ev["call_id"], "output": "Order 42 shipped"}})
			send(map[string]any{"type": "response.create"})
		}
	}
	if seen[0] != "session.created" || !strings.Contains(strings.Join(seen, " "), "session.updated") {
		t.Errorf("events %v, want session.created first and a session.updated", seen)
	}
	if !strings.Contains(transcripts[0], "sandbox") || !strings.Contains(transcripts[1], "audio packets received") || transcripts[2] != "The tool answered: Order 42 shipped" {
		t.Errorf("transcripts %q", transcripts)
	}
	select {
	case out := <-s.ToolOutputs():
		if out != "Order 42 shipped" {
			t.Errorf("tool output %q", out)
		}
	default:
		t.Error("the tool output was not recorded")
	}

	send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "hi there"}}}})
	send(map[string]any{"type": "response.create"})
	for {
		select {
		case ev := <-events:
			if ev["type"] == "response.output_audio_transcript.done" {
				if !strings.HasPrefix(ev["transcript"].(string), "You wrote \u201chi there\u201d.") {
					t.Errorf("text answer %q", ev["transcript"])
				}
				goto done
			}
		case <-timeout:
			t.Fatal("no answer to the text message")
		}
	}
done:
	if s.RTPPackets() < 25 {
		t.Errorf("sandbox received %d RTP packets, want >= 25", s.RTPPackets())
	}
	if played.Load() == 0 {
		t.Error("no voice-like audio arrived from the sandbox")
	}
	if s.Calls() != 1 {
		t.Errorf("%d calls", s.Calls())
	}
}
