package telephony_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// TestToolCallMidCall runs a webhook tool through the real tool facility
// while audio keeps flowing both ways, then checks the output item and the
// response.create that follow, and the call's log.
func TestToolCallMidCall(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	arrived := make(chan string, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		arrived <- string(b)
		<-release
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"open":true,"until":"18:00"}`))
	}))
	defer hook.Close()
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	e := newPhoneEnv(t, map[string]string{"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true"})
	res := e.do(e.owner, "POST", fmt.Sprintf("/api/agents/%d/tools", e.ada), map[string]any{
		"name": "opening_hours", "description": "Tells whether the shop is open.", "url": hook.URL, "method": "POST",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"day": map[string]any{"type": "string"}}},
	})
	if res.status != 201 {
		t.Fatalf("create tool: %d %s", res.status, res.body)
	}
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	if ev, _ := ss.WaitType(ctx, "session.update"); !strings.Contains(string(ev.Raw), `"name":"opening_hours"`) {
		t.Fatalf("the tool is not offered: %s", ev.Raw)
	}
	ss.Send(ctx, map[string]any{"type": "response.created"})
	ss.Send(ctx, map[string]any{"type": "response.function_call_arguments.done", "call_id": "call_42", "name": "opening_hours", "arguments": `{"day":"monday"}`})
	select {
	case body := <-arrived:
		if !strings.Contains(body, "monday") {
			t.Fatalf("webhook body %q", body)
		}
	case <-ctx.Done():
		t.Fatal("the webhook was not called")
	}
	// Audio flows while the tool runs.
	c.SendMedia(ctx, frame(5))
	if _, err := ss.WaitAudio(ctx, 1); err != nil {
		t.Fatal(err)
	}
	delta := base64.StdEncoding.EncodeToString(frame(6))
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_2", "delta": delta})
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Payload == delta }); err != nil {
		t.Fatal(err)
	}
	ss.Send(ctx, map[string]any{"type": "response.done"})
	free()
	out, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool {
		return ev.Type == "conversation.item.create" && strings.Contains(string(ev.Raw), "function_call_output")
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.Raw), `"call_id":"call_42"`) || !strings.Contains(string(out.Raw), `18:00`) {
		t.Fatalf("output item = %s", out.Raw)
	}
	if _, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool { return ev.Type == "response.create" }); err != nil {
		t.Fatal(err)
	}
	c.Stop(ctx)
	rec := e.record(c.CallSID)
	events := fmt.Sprint(rec["events"])
	if !strings.Contains(events, "type:tool_call") || !strings.Contains(events, "opening_hours") || !strings.Contains(events, "18:00") {
		t.Fatalf("events = %s", events)
	}
}

// TestConcurrentCalls runs 200 simulated calls at once, each with 2 s of
// caller audio and agent audio back, then checks every call's record and
// transcript through the API, and that no goroutine outlives the calls.
// No call hangs up before all of them are live, so all are at once.
//
// Under the race detector it runs 100, ringing 40 ms apart: there the
// pure-Go SQLite is instrumented too, and 200 admissions, or 100 ringing
// 15 ms apart beside another package's browser tests, write more than the
// one write connection gets through within a stream's 10 s admission
// bound on the machine's two cores. The calls ring apart, as a busy
// line's do, rather than in the same microsecond. `make bench` runs 200
// calls on a release build (docs/benchmarks.md).
func TestConcurrentCalls(t *testing.T) {
	const frames = 100
	calls, ring := 200, 15*time.Millisecond
	if raceEnabled {
		calls, ring = 100, 40*time.Millisecond
	}
	e := newPhoneEnv(t, nil)
	client := &http.Client{Transport: &http.Transport{}}
	before := goroutinesSettle(0)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var live sync.WaitGroup
	live.Add(calls)
	allLive := make(chan struct{})
	go func() { live.Wait(); close(allLive) }()

	// Sessions reach the fake in any order: each call's first frame says
	// which call it is.
	var mu sync.Mutex
	byFirst := map[string]chan *realtimefake.Session{}
	sessionFor := func(first string) chan *realtimefake.Session {
		mu.Lock()
		defer mu.Unlock()
		if byFirst[first] == nil {
			byFirst[first] = make(chan *realtimefake.Session, 1)
		}
		return byFirst[first]
	}
	go func() {
		for range calls {
			ss, err := e.model.Next(ctx)
			if err != nil {
				return
			}
			go func() {
				a, err := ss.WaitAudio(ctx, 1)
				if err == nil {
					sessionFor(a[0]) <- ss
				}
			}()
		}
	}()

	sids := make([]string, calls)
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			errs <- func() error {
				sid := e.fake.IncomingCall("+14155550199", e.number)
				sids[i] = sid
				c, err := callsim.Inbound(ctx, client, e.srv.URL, "+14155550199", e.number, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, CallSID: sid, EchoMarks: true})
				if err != nil {
					return err
				}
				defer c.Close()
				payload := func(j int) string {
					b := frame(j)
					b[0], b[1] = byte(i), byte(i>>8)
					return base64.StdEncoding.EncodeToString(b)
				}
				if err := c.SendPayload(ctx, payload(0)); err != nil {
					return err
				}
				var ss *realtimefake.Session
				select {
				case ss = <-sessionFor(payload(0)):
				case <-c.Done():
					return fmt.Errorf("call %d: the stream closed (%d %q) before its model took audio", i, c.CloseStatus(), c.CloseReason())
				case <-ctx.Done():
					return fmt.Errorf("call %d: no model session", i)
				}
				live.Done()
				for j := 1; j < frames; j++ {
					if err := c.SendPayload(ctx, payload(j)); err != nil {
						return err
					}
				}
				got, err := ss.WaitAudio(ctx, frames)
				if err != nil {
					return err
				}
				for j := range frames {
					if got[j] != payload(j) {
						return fmt.Errorf("call %d: frame %d differs", i, j)
					}
				}
				// The transcript goes before the last delta: once that delta has
				// reached the caller, the relay has taken the transcript.
				for j := range frames {
					if j == frames-1 {
						ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "transcript": fmt.Sprintf("answer %d", i)})
					}
					ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_1", "delta": payload(j)})
				}
				if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Payload == payload(frames-1) }); err != nil {
					return fmt.Errorf("call %d: agent audio: %w", i, err)
				}
				var media int
				for _, m := range c.Received() {
					if m.Event == "media" {
						if m.Payload != payload(media) {
							return fmt.Errorf("call %d: agent frame %d differs", i, media)
						}
						media++
					}
				}
				if media != frames {
					return fmt.Errorf("call %d: %d agent frames, want %d", i, media, frames)
				}
				select {
				case <-allLive:
				case <-ctx.Done():
					return fmt.Errorf("call %d: the other calls did not all go live", i)
				}
				if err := c.Stop(ctx); err != nil {
					return err
				}
				select {
				case <-c.Done():
				case <-ctx.Done():
					return fmt.Errorf("call %d: not closed", i)
				}
				if !ss.WaitDone(5 * time.Second) {
					return fmt.Errorf("call %d: model socket left open", i)
				}
				return nil
			}()
		})
		time.Sleep(ring)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, sid := range sids {
		rec := e.record(sid)
		if rec["end_reason"] != "caller_hangup" || !strings.Contains(fmt.Sprint(rec["events"]), fmt.Sprintf("text:answer %d ", i)) {
			t.Fatalf("call %d: record %v", i, rec)
		}
	}
	client.CloseIdleConnections()
	if after := goroutinesSettle(before); after > before {
		t.Fatalf("%d goroutines before the calls, %d after", before, after)
	}
}
