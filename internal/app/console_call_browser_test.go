package app_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/g711"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// tone is d of a 440 Hz tone as 8 kHz mu-law.
func tone(d time.Duration) []byte {
	n := int(d.Seconds() * 8000)
	out := make([]byte, n)
	for i := range out {
		out[i] = g711.Encode(int16(8000 * math.Sin(2*math.Pi*440*float64(i)/8000)))
	}
	return out
}

// rms is the loudness of mu-law audio, in 16-bit sample units.
func rms(mulaw []byte) float64 {
	var sum float64
	for _, u := range mulaw {
		v := float64(g711.Decode(u))
		sum += v * v
	}
	return math.Sqrt(sum / float64(len(mulaw)))
}

// "Call this agent" in a real browser with a fake microphone: the console's
// Phone tab calls the agent over the phone path itself. The relay gets the
// browser's mu-law frames and passes them to the model (a fake realtime
// service on loopback); the model's audio comes back through the relay and
// plays in the page, whose mark echoes tell the relay what was heard; the
// model's barge-in clears the page's queue; the transcript and a tool call
// show while the call runs; the ended call is a phone conversation of
// direction test. axe-core checks the tab with the call's panel live.
func TestConsoleBrowserCall(t *testing.T) {
	t.Parallel()
	axe := axeSource(t)
	ctx := newBrowser(t)
	model := realtimefake.New("sk-test")
	defer model.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"shipped","eta":"tomorrow"}`)
	}))
	defer hook.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "TWILIO_AUTH_TOKEN": carrierToken,
		"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": model.URL(), "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
	})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "greeting": "Hello, this is Ada from Acme."}, &a)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, map[string]any{"name": "lookup_order", "description": "Find an order",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}, "url": hook.URL}, nil)
	c := newConsole(t, ctx, s.URL)
	shots := screenshotDir(t)

	c.open("#/agents/"+itoa(a.ID)+"/phone", 1000, 900)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Ada")
	c.poll("the call panel", `!!document.getElementById("browser-call")`)
	c.enter("Call this agent") // a real key press: the user's gesture for the microphone and audio
	c.poll("the call is live", `document.getElementById("browser-call").dataset.state === "live"`)

	// Browser → relay → model: 20 ms mu-law frames from the microphone.
	cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ss, err := model.Next(cctx)
	if err != nil {
		t.Fatal(err)
	}
	const want = 50 // a second of audio
	audio, err := ss.WaitAudio(cctx, want)
	if err != nil {
		t.Fatal(err)
	}
	loud := 0
	for i, a := range audio {
		b, err := base64.StdEncoding.DecodeString(a)
		if err != nil || len(b) != callsim.FrameBytes {
			t.Fatalf("frame %d from the browser: %d bytes, %v; want %d bytes of mu-law", i, len(b), err, callsim.FrameBytes)
		}
		if rms(b) > 100 {
			loud++
		}
	}
	t.Logf("the relay passed %d frames from the browser to the model; %d of them louder than silence", len(audio), loud)
	if loud == 0 {
		t.Error("every frame from the fake microphone is silent: the capture or its encoding is broken")
	}

	// Model → relay → browser: a minute of the agent's audio, played in
	// the page; the transcript and a tool call show while the call runs.
	// The barge-in below needs audio still playing when it comes, however
	// slowly a loaded machine gets there: the relay clears only what the
	// page has not played yet.
	const spoken = time.Minute
	speech := tone(spoken)
	for i := 0; i < len(speech); i += 1600 {
		ss.Send(cctx, map[string]any{"type": "response.output_audio.delta", "response_id": "resp_1", "item_id": "item_1", "output_index": 0, "content_index": 0,
			"delta": base64.StdEncoding.EncodeToString(speech[i:min(i+1600, len(speech))])})
	}
	ss.Send(cctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_1", "transcript": "Hello, this is Ada from Acme."})
	c.poll("the agent's audio received", `+document.getElementById("browser-call").dataset.received >= 250`)
	c.poll("the agent's audio playing", `+document.getElementById("browser-call").dataset.played >= 25`)
	ss.Send(cctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_2", "transcript": "Where is my order A17?"})
	ss.Send(cctx, map[string]any{"type": "response.function_call_arguments.done", "call_id": "call_1", "name": "lookup_order", "arguments": `{"id":"A17"}`})
	c.poll("the transcript and the tool call", `(t => t.includes("Agent:Hello, this is Ada from Acme.") && t.includes("You:Where is my order A17?") && t.includes("Tool lookup_order") && t.includes("shipped"))(document.getElementById("browser-call-transcript").innerText.replace(/\s+/g, m => m.includes("\n") ? "\n" : " ").replace(/: /g, ":"))`)

	// Barge-in: the caller speaks over the agent; the page drops its
	// queue, and the model is told how much was heard (from mark echoes).
	ss.Send(cctx, map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": 1000, "item_id": "item_3"})
	c.poll("the barge-in", `+document.getElementById("browser-call").dataset.clears >= 1`)
	tr, err := ss.WaitType(cctx, "conversation.item.truncate")
	if err != nil {
		t.Fatal(err)
	}
	var truncate struct {
		AudioEndMs int64 `json:"audio_end_ms"`
	}
	json.Unmarshal(tr.Raw, &truncate)
	if truncate.AudioEndMs <= 0 || truncate.AudioEndMs >= spoken.Milliseconds() {
		t.Errorf("truncate at %d ms: the page's mark echoes should put it between the start and the end of the %v it was sent", truncate.AudioEndMs, spoken)
	}
	counts := eval[map[string]string](t, ctx, `Object.assign({}, document.getElementById("browser-call").dataset)`)
	t.Logf("the page: %s frames sent, %s received, %s played, %s clears; truncated at %d ms", counts["sent"], counts["received"], counts["played"], counts["clears"], truncate.AudioEndMs)
	played := eval[int](t, ctx, `+document.getElementById("browser-call").dataset.played`)
	if played >= len(speech)/callsim.FrameBytes {
		t.Errorf("the page played all %d frames: the clear did not drop its queue", played)
	}

	c.axeCheck(axe, "the Phone tab with a live call")
	c.shot(shots, "console-browser-call.png")

	// The end: the page sends stop; the call is a phone conversation of
	// direction test, in the API and on the console's conversations pages.
	c.press("End call")
	c.poll("the end", `document.getElementById("browser-call-status").textContent.startsWith("Call ended (caller_hangup)")`)
	var list struct {
		Conversations []agentline.Conversation `json:"conversations"`
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(p.ID)+"/conversations?kind=phone", tok, nil, &list)
	if len(list.Conversations) != 1 || list.Conversations[0].Direction != agentline.CallTest || list.Conversations[0].Status != agentline.ConversationEnded ||
		list.Conversations[0].AgentID != a.ID || len(list.Conversations[0].ToolCalls) != 1 || !strings.Contains(list.Conversations[0].ToolCalls[0].Result, "shipped") {
		t.Errorf("the project's phone conversations: %+v", list.Conversations)
	}
	c.open("#/conversations", 1000, 900)
	c.heading("Conversations")
	c.poll("the test call in the list", `(t => !!t && t.innerText.includes("Browser test call") && t.innerText.includes("Ended"))(document.querySelector("main tbody tr"))`)
	eval[any](t, ctx, `document.querySelector("main tbody tr a").click()`)
	c.heading("Test call from owner@example.com")
	c.poll("its transcript", `document.querySelector(".transcript").innerText.includes("Where is my order A17?")`)
	c.noErrors("the browser call")
}
