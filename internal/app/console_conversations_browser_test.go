package app_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// Editing a tool in the console and seeing the change used: the sandbox
// calls the agent's first tool with its required parameters, so the new
// required parameter reaches the tool's endpoint in the Test panel's
// conversation. Then that conversation in the conversations list and on
// its page (timed transcript, the tool call, the webhook deliveries of its
// events), a phone conversation with a recording and an analysis (served
// by the browser's request interception, in the shape the API gives them),
// deletion with confirmation, and the analytics' empty state. axe-core
// checks every state on the way.
func TestConsoleToolEditAndConversations(t *testing.T) {
	t.Parallel()
	axe := axeSource(t)
	ctx := newBrowser(t)
	var mu sync.Mutex
	var toolBodies []string
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		toolBodies = append(toolBodies, string(b))
		mu.Unlock()
		io.WriteString(w, `{"status":"shipped","eta":"tomorrow"}`)
	}))
	defer tool.Close()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer hooks.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true", "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "instructions": "You track orders."}, &a)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/tools", tok, map[string]any{"name": "lookup_order", "description": "Old words",
		"url": tool.URL, "method": "POST", "parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]string{"type": "string"}}, "required": []string{"id"}}}, nil)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/webhooks", tok, map[string]any{"url": hooks.URL + "/agentline"}, nil)
	c := newConsole(t, ctx, s.URL)
	code := axe
	shots := screenshotDir(t)
	interceptConversation(t, ctx, a.ID)

	// Edit the tool: new words, a new required parameter.
	c.open("#/agents/"+itoa(a.ID)+"/tools", 1000, 800)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Ada")
	c.press("Edit lookup_order")
	c.poll("the tool editor", `!!document.querySelector("form[aria-label='Edit tool']")`)
	c.fill("Edit tool", "Description", "Looks up an order by its number and the buyer's email")
	c.press("Add parameter")
	c.fillAria("Name of parameter 2", "email")
	c.fillAria("Description of parameter 2", "The buyer's email")
	c.fillAria("Required of parameter 2", "true")
	c.axeCheck(code, "the tool editor")
	c.accessible("the tool editor")
	c.shot(shots, "console-tool-editor.png")
	c.press("Save lookup_order")
	c.poll("the edited tool", `!document.querySelector("#tool-editor") && document.querySelector("main table").innerText.includes("id, email")`)
	var saved struct {
		Description string
		Parameters  struct {
			Required []string `json:"required"`
		} `json:"parameters"`
	}
	s.Must(t, 200, "GET", "/api/tools/1", tok, nil, &saved)
	if !strings.Contains(saved.Description, "buyer's email") || strings.Join(saved.Parameters.Required, ",") != "id,email" {
		t.Errorf("the tool after editing: %+v", saved)
	}

	// The Test panel's conversation uses the edited tool.
	c.press("Test")
	c.press("Chat by text")
	// A text session waits for the first message; the sandbox answers it,
	// then calls the tool.
	c.fill("Send a message", "Message", "Where is order 42?")
	c.press("Send")
	c.poll("the tool call", `document.getElementById("test-transcript").innerText.includes("Tool lookup_order")`)
	if tr := c.text("#test-transcript"); !strings.Contains(tr, `"email"`) {
		t.Errorf("the tool call in the Test panel lacks the new parameter: %q", tr)
	}
	mu.Lock()
	got := strings.Join(toolBodies, "\n")
	mu.Unlock()
	if !strings.Contains(got, `"email"`) {
		t.Errorf("the tool's endpoint got %q, without the new parameter", got)
	}
	c.poll("the sandbox's answer", `document.getElementById("test-transcript").innerText.includes("The tool answered")`)
	c.press("End")
	c.poll("the end", `document.getElementById("test-status").textContent === "Ended."`)

	// The conversations list, then the conversation's page.
	c.press("Conversations")
	c.heading("Conversations")
	c.poll("the conversation", `!!document.querySelector("main tbody tr") && document.querySelector("main tbody tr").innerText.includes("Console test")`)
	c.axeCheck(code, "conversations")
	c.shot(shots, "console-conversations.png")
	eval[any](t, ctx, `document.querySelector("main tbody tr a").click()`)
	c.poll("the conversation's page", `!!document.getElementById("transcript-title") && !!document.querySelector(".transcript.timed li.tool")`)
	if tc := c.text(".transcript.timed li.tool"); !strings.Contains(tc, "lookup_order") || !strings.Contains(tc, "email") || !strings.Contains(tc, "shipped") {
		t.Errorf("the tool call on the conversation's page: %q", tc)
	}
	if at := c.text(".transcript.timed li .at"); !strings.Contains(at, ":") {
		t.Errorf("a transcript line's time: %q", at)
	}
	c.poll("the webhook deliveries", `document.querySelector("[aria-labelledby=deliveries-title]").innerText.includes(`+js(hooks.URL+"/agentline")+`)`)
	if d := c.text("[aria-labelledby=deliveries-title] tbody"); !strings.Contains(d, "conversation.started") {
		t.Errorf("deliveries shown: %q", d)
	}
	c.axeCheck(code, "a conversation")

	// A phone conversation with a recording and an analysis.
	c.open("#/conversations/call_999", 1000, 900)
	c.poll("the analysis", `(a => !!a && a.innerText.includes("The caller asked where order"))(document.querySelector(".analysis"))`)
	if an := c.text(".analysis"); !strings.Contains(an, "The caller asked where order 1234 is.") || !strings.Contains(an, "Yes") || !strings.Contains(an, "order_id") || !strings.Contains(an, "1234") {
		t.Errorf("the analysis card: %q", an)
	}
	c.poll("the recording loaded", `(a => !!a && a.src.startsWith("blob:") && a.readyState >= 1)(document.querySelector("audio"))`)
	if d := eval[float64](t, ctx, `document.querySelector("audio").duration`); d < 0.4 || d > 0.6 {
		t.Errorf("the recording plays %v s, want 0.5", d)
	}
	c.axeCheck(code, "a phone conversation")
	c.accessible("a phone conversation")
	c.shot(shots, "console-conversation.png")
	// At 360 px the page is one column and nothing is cut off.
	c.open("#/conversations/call_999", 360, 740)
	c.poll("the analysis at 360 px", `!!document.querySelector(".analysis .summary")`)
	c.accessible("a phone conversation at 360 px")

	// Delete the real one, asked first.
	c.open("#/conversations", 1000, 800)
	c.poll("the conversation", `!!document.querySelector("main tbody tr a")`)
	eval[any](t, ctx, `document.querySelector("main tbody tr a").click()`)
	c.press("Delete conversation")
	c.poll("the question", `!!document.querySelector("dialog[open]")`)
	c.press("Delete conversation")
	c.heading("Conversations")
	c.poll("no conversations", `document.querySelector("main").innerText.includes("No conversations yet.")`)
	c.axeCheck(code, "no conversations")

	// Analytics with nothing to count says so.
	c.press("Analytics")
	c.heading("Analytics")
	c.poll("the empty state", `document.querySelector("main").innerText.includes("No conversations yet.")`)
	c.axeCheck(code, "empty analytics")
	c.shot(shots, "console-analytics-empty.png")
	c.noErrors("tools and conversations")
}

// interceptConversation answers GET /api/conversations/call_999 (and its
// recording and deliveries) in the browser, in the API's shape with a
// stored recording and a finished analysis: the recording and analysis
// helpers' API, which this branch renders but does not serve.
func interceptConversation(t *testing.T, ctx context.Context, agentID int64) {
	t.Helper()
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	conv, _ := json.Marshal(map[string]any{
		"id": "call_999", "project_id": 1, "agent_id": agentID, "kind": "phone", "channel_id": nil, "number_id": nil,
		"direction": "inbound", "from": "+14155550100", "to": "+14155550199", "status": "ended",
		"started_at": start, "ended_at": start.Add(95 * time.Second), "last_event_at": start.Add(95 * time.Second), "duration_ms": 95000, "end_reason": "caller_hangup",
		"transcript": []map[string]any{
			{"speaker": "agent", "text": "Hello, this is Ada from Acme.", "at": start.Add(time.Second)},
			{"speaker": "user", "text": "Where is my order 1234?", "at": start.Add(4 * time.Second)},
			{"speaker": "agent", "text": "It ships tomorrow.", "at": start.Add(9 * time.Second)},
		},
		"tool_calls": []map[string]any{{"call_id": "c1", "name": "lookup_order", "arguments": map[string]string{"id": "1234"},
			"result": `{"status":"shipped"}`, "is_error": false, "duration_ms": 84, "at": start.Add(6 * time.Second)}},
		"recording": map[string]any{"status": "stored", "duration_ms": 500, "size_bytes": 8044, "content_type": "audio/wav", "url": "/api/conversations/call_999/recording"},
		"analysis": map[string]any{"status": "done", "summary": "The caller asked where order 1234 is.", "success": true,
			"success_reason": "The caller learned the order ships tomorrow.", "data": map[string]any{"order_id": "1234", "resolved": true},
			"model": "gpt-4o-mini", "error": "", "finished_at": start.Add(2 * time.Minute)},
		"lead": nil,
	})
	wav := silentWAV(8000, 2, 4000)
	answers := map[string]struct {
		ctype string
		body  []byte
	}{
		"/api/conversations/call_999":            {"application/json", conv},
		"/api/conversations/call_999/recording":  {"audio/wav", wav},
		"/api/conversations/call_999/deliveries": {"application/json", []byte(`{"deliveries":[]}`)},
	}
	err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		// Listen's fn must not run commands: the answer goes from another
		// goroutine. The page may be gone by then; the checks see it.
		go func() {
			u := e.Request.URL
			path := u[strings.Index(u[len("http://"):], "/")+len("http://"):]
			if a, ok := answers[path]; ok {
				chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: e.RequestID, ResponseCode: 200, Body: a.body,
					ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: a.ctype}}})
				return
			}
			chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		}()
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/conversations/call_999*"}}}); err != nil {
		t.Fatal(err)
	}
}

// silentWAV is a PCM WAV of frames frames of silence.
func silentWAV(rate, channels, frames int) []byte {
	data := frames * channels * 2
	b := make([]byte, 44+data)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], uint16(channels))
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*channels*2))
	binary.LittleEndian.PutUint16(b[32:], uint16(channels*2))
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	return b
}
