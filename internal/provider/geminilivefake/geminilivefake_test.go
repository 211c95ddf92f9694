package geminilivefake_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/provider/geminilivefake"
)

func dial(ctx context.Context, t *testing.T, f *geminilivefake.Server, key string) (*websocket.Conn, error) {
	t.Helper()
	url := strings.Replace(f.URL(), "http", "ws", 1) + geminilivefake.PathLive
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"x-goog-api-key": {key}}})
	if err == nil {
		t.Cleanup(func() { c.CloseNow() })
	}
	return c, err
}

func read(ctx context.Context, t *testing.T, c *websocket.Conn) map[string]json.RawMessage {
	t.Helper()
	typ, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if typ != websocket.MessageBinary {
		t.Errorf("server message in a %v frame, want binary", typ)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The fake's handshake, setup and resumption, as a client sees them.
func TestGeminiFakeSetupAudioAndResumption(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := geminilivefake.New("g-key")
	defer f.Close()
	if _, err := dial(ctx, t, f, "wrong"); err == nil {
		t.Fatal("a wrong key opened a socket")
	}
	c, err := dial(ctx, t, f, "g-key")
	if err != nil {
		t.Fatal(err)
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/gemini-live","sessionResumption":{},"contextWindowCompression":{"slidingWindow":{}}}}`))
	if m := read(ctx, t, c); m["setupComplete"] == nil {
		t.Fatalf("first answer %v", m)
	}
	var upd struct{ NewHandle string }
	json.Unmarshal(read(ctx, t, c)["sessionResumptionUpdate"], &upd)
	if upd.NewHandle == "" {
		t.Fatal("no resumption handle after a setup asking for resumption")
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"realtimeInput":{"audio":{"data":"AAAAAA==","mimeType":"audio/pcm;rate=8000"}}}`))
	ss, _ := f.Next(ctx)
	if err := ss.WaitAudioBytes(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if ch := ss.Chunks(); len(ch) != 1 || ch[0].MimeType != "audio/pcm;rate=8000" {
		t.Fatalf("chunks %+v", ch)
	}
	if s, _ := ss.Setup(); s.ContextWindowCompression == nil || s.ContextWindowCompression.SlidingWindow == nil {
		t.Fatalf("setup %+v", s)
	}

	// A known handle resumes; an unknown one is refused with 1007.
	c2, _ := dial(ctx, t, f, "g-key")
	c2.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/gemini-live","sessionResumption":{"handle":"`+upd.NewHandle+`"}}}`))
	if m := read(ctx, t, c2); m["setupComplete"] == nil {
		t.Fatalf("resumed setup answered %v", m)
	}
	ss2, _ := f.Next(ctx)
	if ss2.Resumed() != upd.NewHandle {
		t.Fatalf("resumed %q, want %q", ss2.Resumed(), upd.NewHandle)
	}
	c3, _ := dial(ctx, t, f, "g-key")
	c3.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/gemini-live","sessionResumption":{"handle":"made-up"}}}`))
	if _, _, err := c3.Read(ctx); websocket.CloseStatus(err) != websocket.StatusInvalidFramePayloadData {
		t.Fatalf("unknown handle: %v", err)
	}
}

// On the constrained method a token's setup is locked over the client's:
// a browser that sends only its model gets the token's modality, and a
// token asking a native-audio model for TEXT is refused with 1007, as the
// service refuses it.
func TestGeminiFakeConstrainedSetup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := geminilivefake.New("g-key")
	defer f.Close()
	tokens := map[string]string{
		"auth_tokens/text":  `{"model":"models/gemini-2.5-flash-native-audio-preview-12-2025","generationConfig":{"responseModalities":["TEXT"]}}`,
		"auth_tokens/audio": `{"model":"models/gemini-2.5-flash-native-audio-preview-12-2025","generationConfig":{"responseModalities":["AUDIO"]},"outputAudioTranscription":{}}`,
	}
	f.Constraints = func(token string) json.RawMessage { return json.RawMessage(tokens[token]) }
	open := func(token string) *websocket.Conn {
		url := strings.Replace(f.URL(), "http", "ws", 1) + geminilivefake.PathConstrained + "?access_token=" + token
		c, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		c.Write(ctx, websocket.MessageText, []byte(`{"setup":{"model":"models/gemini-2.5-flash-native-audio-preview-12-2025","generationConfig":{"responseModalities":["AUDIO"]}}}`))
		return c
	}
	_, _, err := open("auth_tokens/text").Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusInvalidFramePayloadData || !strings.Contains(err.Error(), "Cannot extract voices") {
		t.Fatalf("a TEXT token for a native-audio model: %v, want close 1007", err)
	}
	if m := read(ctx, t, open("auth_tokens/audio")); m["setupComplete"] == nil {
		t.Fatalf("an AUDIO token answered %v", m)
	}
	ss := f.Sessions()[1]
	if s, _ := ss.Setup(); len(s.OutputAudioTranscription) == 0 || s.GenerationConfig.ResponseModalities[0] != "AUDIO" {
		t.Fatalf("locked setup %+v", s)
	}
}
