package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
)

// endFixture is a sandbox agent behind a widget channel whose key allows
// the host page served on another loopback origin (an sdkSite whose host
// serves the widget's page at / and a plain page at /elsewhere).
type endFixture struct {
	s    *apptest.Server
	tok  string
	host string // the host page's URL
}

func newEndFixture(t *testing.T, env map[string]string) endFixture {
	t.Helper()
	env["AGENTLINE_SANDBOX"] = "true"
	site := newSDKSiteEnv(t, env, false, map[string]any{"show_transcript": true})
	site.pages["/"] = hostPage(site.s.URL, site.key, site.p.ID, site.a.ID, site.c.ID)
	site.pages["/elsewhere"] = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Elsewhere</title></head><body><p>Another page.</p></body></html>`
	return endFixture{s: site.s, tok: site.tok, host: site.host.URL}
}

// talk opens the host page, starts a voice session with the fake
// microphone, and waits until the server holds a line of its transcript;
// it returns the session's id.
func (f endFixture) talk(t *testing.T, ctx context.Context) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(f.host)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "ready", `window.widgetEvents.some(e => e[0] === "ready")`)
	eval[any](t, ctx, shadow+`.querySelector(".launcher").click()`)
	eval[any](t, ctx, shadow+`.querySelector(".talk").click()`)
	poll(t, ctx, "session_started", `window.widgetEvents.some(e => e[0] === "session_started")`)
	poll(t, ctx, "the sandbox's answer", shadow+`.querySelector("ol").innerText.includes("audio packets received from your microphone")`)
	id := eval[string](t, ctx, `window.widgetEvents.find(e => e[0] === "session_started")[1].session_id`)
	// The transcript reaches the server in the SDK's next batch (5 s).
	c := f.until(t, id, 30*time.Second, func(c agentline.Conversation) bool { return len(c.Transcript) > 0 })
	if c.Status != agentline.ConversationLive {
		t.Fatalf("the conversation is %s while the visitor talks", c.Status)
	}
	return id
}

// until polls the conversation until cond holds, for at most d.
func (f endFixture) until(t *testing.T, id string, d time.Duration, cond func(agentline.Conversation) bool) agentline.Conversation {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		var c agentline.Conversation
		f.s.Must(t, 200, "GET", "/api/conversations/"+id, f.tok, nil, &c)
		if cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation %s not as wanted within %v: %+v", id, d, c)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A visitor talks to the sandbox through the widget, then navigates away
// mid-call: the SDK reports the end on pagehide with a keepalive request,
// and within 5 s the conversation is ended (reason pagehide) with a
// duration.
func TestWidgetEndsWhenTheVisitorLeaves(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	f := newEndFixture(t, map[string]string{})
	id := f.talk(t, ctx)
	left := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(f.host+"/elsewhere")); err != nil {
		t.Fatal(err)
	}
	c := f.until(t, id, time.Until(left.Add(5*time.Second)), func(c agentline.Conversation) bool { return c.Status != agentline.ConversationLive })
	if c.Status != agentline.ConversationEnded || c.EndReason != "pagehide" || c.DurationMS <= 0 || c.EndedAt == nil {
		t.Fatalf("after the visitor left: status %s, reason %q, duration %d ms, ended %v", c.Status, c.EndReason, c.DurationMS, c.EndedAt)
	}
	t.Logf("ended within %v of the navigation, duration %d ms", time.Since(left).Round(time.Millisecond), c.DurationMS)
}

// A visitor whose browser is killed mid-call (no pagehide, nothing more
// reported) is abandoned by the idle sweep after the idle timeout (20 s
// here), at the last event seen, with the duration up to it.
func TestWidgetAbandonedWhenTheBrowserDies(t *testing.T) {
	t.Parallel()
	ctx := newOwnBrowser(t)
	f := newEndFixture(t, map[string]string{"AGENTLINE_SESSION_IDLE_TIMEOUT": "20s"})
	id := f.talk(t, ctx)
	proc := chromedp.FromContext(ctx).Browser.Process()
	if proc == nil {
		t.Fatal("no browser process")
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	proc.Wait()
	killed := time.Now()
	c := f.until(t, id, time.Minute, func(c agentline.Conversation) bool { return c.Status != agentline.ConversationLive })
	if c.Status != agentline.ConversationAbandoned || c.EndReason != agentline.EndReasonIdleTimeout || c.DurationMS <= 0 || c.EndedAt == nil || c.EndedAt.After(killed) {
		t.Fatalf("after the browser died: status %s, reason %q, duration %d ms, ended %v (killed at %v)", c.Status, c.EndReason, c.DurationMS, c.EndedAt, killed)
	}
	t.Logf("abandoned %v after the kill, duration %d ms", time.Since(killed).Round(time.Millisecond), c.DurationMS)
}

// A live widget session reports a heartbeat every 30 s, and when its page
// is hidden at once (what is queued, with a heartbeat, keepalive): the
// server's last event time moves on each time, and the session stays live.
func TestWidgetHeartbeats(t *testing.T) {
	t.Parallel()
	ctx := newBrowser(t)
	f := newEndFixture(t, map[string]string{})
	id := f.talk(t, ctx)
	started := f.until(t, id, time.Second, func(agentline.Conversation) bool { return true }).StartedAt

	// Hidden (the visitor switched tabs): a heartbeat now, and still live.
	hidden := time.Now().Add(-100 * time.Millisecond)
	eval[any](t, ctx, `Object.defineProperty(document, "visibilityState", {configurable: true, get: () => "hidden"}), document.dispatchEvent(new Event("visibilitychange"))`)
	c := f.until(t, id, 5*time.Second, func(c agentline.Conversation) bool { return c.LastEventAt != nil && !c.LastEventAt.Before(hidden) })
	if c.Status != agentline.ConversationLive {
		t.Fatalf("a hidden page ended the session: %s", c.Status)
	}
	eval[any](t, ctx, `Object.defineProperty(document, "visibilityState", {configurable: true, get: () => "visible"}), document.dispatchEvent(new Event("visibilitychange"))`)

	// The periodic heartbeat, 30 s after the session connected.
	c = f.until(t, id, 60*time.Second, func(c agentline.Conversation) bool {
		return c.LastEventAt != nil && c.LastEventAt.Sub(started) >= 29*time.Second
	})
	if c.Status != agentline.ConversationLive {
		t.Fatalf("the session is %s after its heartbeat", c.Status)
	}
	t.Logf("last event %v after the start", c.LastEventAt.Sub(started).Round(time.Millisecond))
}
