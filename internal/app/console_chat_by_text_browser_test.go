package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// The Test tab's "Chat by text" is text only: no microphone, no
// Mute, no "Live: listening", and the sandbox's answer comes at once,
// without a line about audio packets.
func TestConsoleChatByTextIsText(t *testing.T) {
	t.Parallel()
	axe := axeSource(t)
	ctx := newBrowser(t)
	countMicrophone(t, ctx)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{"AGENTLINE_SANDBOX": "true"})
	_, _, a := acmeWithAda(t, s)
	c := newConsole(t, ctx, s.URL)
	c.open("#/agents/"+itoa(a.ID)+"/test", 1000, 800)
	c.signIn("owner@example.com", apptest.Password)
	c.heading("Ada")

	c.press("Chat by text")
	c.poll("a live text session", `document.getElementById("test-status").textContent.startsWith("Live")`)
	if st := c.text("#test-status"); strings.Contains(st, "listening") {
		t.Errorf("text mode says %q", st)
	}
	if eval[bool](t, ctx, `[...document.querySelectorAll("button")].some(b => /^(Mute|Unmute)$/.test(b.textContent.trim()) && !b.hidden)`) {
		t.Error("text mode shows Mute")
	}
	c.fill("Send a message", "Message", "Where is my order?")
	sent := time.Now()
	c.press("Send")
	pollFor(t, ctx, 3*time.Second, "the agent's answer", `document.getElementById("test-transcript").textContent.includes("Agent: You wrote \u201cWhere is my order?\u201d")`)
	t.Logf("the answer began %v after Send", time.Since(sent).Round(time.Millisecond))
	c.poll("the whole answer", `document.getElementById("test-transcript").textContent.includes("I can only repeat it.")`)
	if tr := c.text("#test-transcript"); strings.Contains(tr, "audio packets") {
		t.Errorf("text mode transcript: %q", tr)
	}
	if n := eval[float64](t, ctx, `window.micCalls`); n != 0 {
		t.Errorf("text mode called getUserMedia %v times", n)
	}
	if n := s.App.Sandbox.RTPPackets(); n != 0 {
		t.Errorf("text mode sent %d audio packets", n)
	}
	c.axeCheck(axe, "the Test tab in text mode")
	c.accessible("the Test tab in text mode")
	c.shot(shotDir(t), "console-chat-by-text.png")
	c.press("End")
	c.poll("the end", `document.getElementById("test-status").textContent === "Ended."`)
	c.noErrors("chat by text")
}
