package telephony_test

import (
	"net/url"
	"sync"
	"testing"
	"time"
)

// maxStatementsPerCall holds an inbound call's database round trips
// (BEGIN and COMMIT included, the job queue's own not counted) from its
// webhook to its status callback, so that they cannot creep back up: they
// are most of what a call costs the server beyond its frames
// (docs/benchmarks.md, "What a call costs beyond its frames").
const maxStatementsPerCall = 17

// maxStatementsCallbackFirst is the same when the carrier's completed
// callback comes as the stream stops: it waits for the relay's end record
// (telephony.relayEndWait) and finds the end written, as when it comes
// after. (One that waits in vain writes the end itself: 22.)
const maxStatementsCallbackFirst = 17

// TestStatementsPerCall counts the statements of one inbound call: the
// webhook, the stream's admission, the relay's end with the call's log,
// the carrier's completed status callback, after the relay's end and as
// the stream stops.
func TestStatementsPerCall(t *testing.T) {
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	callback := func(sid string) {
		form := url.Values{"CallSid": {sid}, "CallStatus": {"completed"}, "Direction": {"inbound"},
			"From": {"+14155550199"}, "To": {e.number}, "CallDuration": {"1"}}
		if res := e.postForm("/api/telephony/status", form, e.fake.AuthToken()); res.status != 204 {
			t.Fatalf("status callback: %d %s", res.status, res.body)
		}
	}
	call := func(callbackFirst bool) int64 {
		before := e.app.Store.Statements()
		c, ss := e.call(ctx, true)
		c.SendMedia(ctx, frame(1))
		if _, err := ss.WaitAudio(ctx, 1); err != nil {
			t.Fatal(err)
		}
		var sent sync.WaitGroup
		if callbackFirst {
			sent.Go(func() { callback(c.CallSID) })
		}
		c.Stop(ctx)
		<-c.Done()
		sent.Wait()
		settled(e.app.Store.Statements)
		if !callbackFirst {
			callback(c.CallSID)
		}
		return settled(e.app.Store.Statements) - before
	}
	call(false) // warm: the tool definitions are cached
	// The fewer of two: a periodic job's sweep may fall in one's window.
	for _, c := range []struct {
		callbackFirst bool
		max           int64
	}{{false, maxStatementsPerCall}, {true, maxStatementsCallbackFirst}} {
		n := min(call(c.callbackFirst), call(c.callbackFirst))
		t.Logf("one inbound call, the callback first %v: %d statements", c.callbackFirst, n)
		if n > c.max {
			t.Errorf("one inbound call, the callback first %v, made %d statements, want at most %d", c.callbackFirst, n, c.max)
		}
	}
}

// settled waits until count has not moved for 300 ms (at most 5 s), and
// returns it: the relay writes a call's end after the carrier's socket has
// closed.
func settled(count func() int64) int64 {
	last, since := count(), time.Now()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if n := count(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) > 300*time.Millisecond {
			break
		}
	}
	return last
}
