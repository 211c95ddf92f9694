package telephony_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// apologized reports whether the carrier was told to play the apology on
// the call, with a hang-up after it.
func (e *phoneEnv) apologized(sid string) bool {
	for _, call := range e.fake.Calls() {
		if call.SID == sid && strings.Contains(call.Twiml, "technical trouble") && strings.HasSuffix(call.Twiml, "<Hangup/></Response>") {
			return true
		}
	}
	return false
}

// hungUpByAPI reports whether the call was ended with Status=completed
// through the carrier's REST API.
func (e *phoneEnv) hungUpByAPI(sid string) bool {
	for _, call := range e.fake.Calls() {
		for _, u := range call.Updates {
			if call.SID == sid && u.Get("Status") == "completed" {
				return true
			}
		}
	}
	return false
}

// eventTexts lists a record's events as "type role text".
func eventTexts(rec map[string]any) []string {
	var out []string
	events, _ := rec["events"].([]any)
	for _, ev := range events {
		m, _ := ev.(map[string]any)
		out = append(out, strings.TrimSpace(fmt.Sprintf("%v %v %v", m["type"], m["role"], m["text"])))
	}
	return out
}

func hasEvent(rec map[string]any, want string) bool {
	for _, s := range eventTexts(rec) {
		if s == want {
			return true
		}
	}
	return false
}

// TestCarrierSocketLostWithoutStop: when the carrier's socket closes with no
// stop message, the call's state at the carrier decides the record: ended
// there is the caller's hang-up; still live is hung up through the REST API.
func TestCarrierSocketLostWithoutStop(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		carrierStatus string // the call's status at the carrier when the socket closes
		reason        string
		hangUp        bool
	}{
		{"still in progress", "in-progress", "carrier_disconnected", true},
		{"completed", "completed", "caller_hangup", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newPhoneEnv(t, nil)
			ctx := testCtx(t)
			c, ss := e.call(ctx, true)
			c.SendMedia(ctx, frame(0))
			ss.WaitAudio(ctx, 1)
			e.fake.SetCallStatus(c.CallSID, tc.carrierStatus)
			c.Close()
			waitClosed(t, c, ss)
			rec := e.record(c.CallSID)
			if rec["end_reason"] != tc.reason {
				t.Fatalf("end reason %v, want %s", rec["end_reason"], tc.reason)
			}
			if got := e.hungUpByAPI(c.CallSID); got != tc.hangUp {
				t.Fatalf("hung up through the REST API: %v, want %v (calls %+v)", got, tc.hangUp, e.fake.Calls())
			}
			if e.apologized(c.CallSID) {
				t.Fatal("an apology was played on a lost stream")
			}
		})
	}
}

// TestModelNotReady: a model that takes the socket but never answers
// session.update ends the call after AGENTLINE_MODEL_READY_TIMEOUT with
// model_not_ready; the caller hears the apology and a hang-up; both sockets
// are closed and the caller's early audio never reached the model.
func TestModelNotReady(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, map[string]string{"AGENTLINE_MODEL_READY_TIMEOUT": "400ms"})
	e.model.NeverReady = true
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	for i := range 5 {
		c.SendMedia(ctx, frame(i))
	}
	waitClosed(t, c, ss)
	rec := e.record(c.CallSID)
	if rec["end_reason"] != "model_not_ready" || rec["status"] != "completed" {
		t.Fatalf("record = %v", rec)
	}
	if d, _ := rec["duration_s"].(float64); d > 5 {
		t.Fatalf("duration %v s: the ready timeout of 400ms was not applied", d)
	}
	if !e.apologized(c.CallSID) {
		t.Fatalf("no apology: %+v", e.fake.Calls())
	}
	if n := len(ss.Audio()); n != 0 {
		t.Fatalf("%d caller frames reached a model that never took the session", n)
	}
	if res := e.do(e.viewer, "GET", fmt.Sprintf("/api/projects/%d/telephony/calls?status=in-progress", e.project), nil); !strings.Contains(string(res.body), `"items":[]`) {
		t.Fatalf("a call is still live: %s", res.body)
	}
}

// TestSlowModel: a model that takes the session late (within the timeout)
// gets the caller's early audio, in order, once ready; one whose deltas
// stall mid-answer keeps the call open (silence is not a failure) until the
// caller hangs up, and the record holds everything said until then.
func TestSlowModel(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, map[string]string{"AGENTLINE_MODEL_READY_TIMEOUT": "5s"})
	e.model.ReadyDelay = 300 * time.Millisecond
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	for i := range 3 {
		c.SendMedia(ctx, frame(i))
	}
	got, err := ss.WaitAudio(ctx, 3)
	if err != nil || len(got) != 3 {
		t.Fatalf("early audio after a late session.updated: %d frames, %v", len(got), err)
	}
	ss.Send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_1", "content_index": 0, "transcript": "Is anyone there?"})
	ss.Send(ctx, map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1"}})
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "response_id": "resp_1", "item_id": "item_2", "delta": "AAAA"})
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "response_id": "resp_1", "item_id": "item_2", "transcript": "Yes, one moment"})
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "media" }); err != nil {
		t.Fatal(err)
	}
	// The model stalls: no more deltas, no response.done. The call stays up.
	select {
	case <-c.Done():
		t.Fatal("a stalled model ended the call")
	case <-time.After(300 * time.Millisecond):
	}
	c.Stop(ctx)
	waitClosed(t, c, ss)
	rec := e.record(c.CallSID)
	if rec["end_reason"] != "caller_hangup" || !hasEvent(rec, "transcript caller Is anyone there?") || !hasEvent(rec, "transcript agent Yes, one moment") {
		t.Fatalf("record = %v", rec)
	}
	if e.apologized(c.CallSID) {
		t.Fatal("apologized for a slow model")
	}
}

// TestModelDropsMidCall: the model's socket breaks mid-answer; the caller
// hears the apology and a hang-up, the record ends model_disconnected and
// keeps what both sides said before.
func TestModelDropsMidCall(t *testing.T) {
	t.Parallel()
	for _, how := range []struct {
		name string
		drop func(*realtimefake.Session)
	}{
		{"cut", (*realtimefake.Session).Drop},
		{"closed", func(ss *realtimefake.Session) { ss.Close(1011, "server_error") }},
	} {
		t.Run(how.name, func(t *testing.T) {
			t.Parallel()
			e := newPhoneEnv(t, nil)
			ctx := testCtx(t)
			c, ss := e.call(ctx, true)
			c.SendMedia(ctx, frame(0))
			ss.WaitAudio(ctx, 1)
			ss.Send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_1", "content_index": 0, "transcript": "What are your hours?"})
			ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "response_id": "resp_1", "item_id": "item_2", "transcript": "We open at nine"})
			ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "response_id": "resp_1", "item_id": "item_3", "delta": "AAAA"})
			if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "media" }); err != nil {
				t.Fatal(err)
			}
			how.drop(ss)
			waitClosed(t, c, ss)
			rec := e.record(c.CallSID)
			if rec["end_reason"] != "model_disconnected" || !hasEvent(rec, "transcript caller What are your hours?") || !hasEvent(rec, "transcript agent We open at nine") {
				t.Fatalf("record = %v", rec)
			}
			if !e.apologized(c.CallSID) {
				t.Fatal("no apology after the model dropped")
			}
		})
	}
}

// TestTranscriptWrittenDuringCall: what both sides say and the tools called
// are in the call's record while the call is still live, so an instance
// that dies mid-call keeps them.
func TestTranscriptWrittenDuringCall(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	c, ss := e.call(ctx, true)
	c.SendMedia(ctx, frame(0))
	ss.WaitAudio(ctx, 1)
	ss.Send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_1", "content_index": 0, "transcript": "Hello?"})
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "response_id": "resp_1", "item_id": "item_2", "transcript": "Hi, this is Ada."})
	ss.Send(ctx, map[string]any{"type": "response.function_call_arguments.done", "response_id": "resp_1", "item_id": "item_3", "call_id": "call_1", "name": "no_such_tool", "arguments": "{}"})
	c.SendDTMF(ctx, "5")

	want := []string{"transcript caller Hello?", "transcript agent Hi, this is Ada.", "tool_call <nil> no_such_tool", "dtmf <nil> 5"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := e.do(e.viewer, "GET", "/api/calls/"+c.CallSID, nil)
		var rec map[string]any
		res.json(&rec)
		if rec["status"] != "in-progress" || rec["end_reason"] != nil {
			t.Fatalf("the call is no longer live: %s", res.body)
		}
		all := true
		for _, w := range want {
			all = all && hasEvent(rec, w)
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events of the live call = %q, want %q", eventTexts(rec), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Hanging up adds nothing twice.
	c.Stop(ctx)
	waitClosed(t, c, ss)
	rec := e.record(c.CallSID)
	if got := eventTexts(rec); len(got) != len(want) {
		t.Fatalf("events after the end = %q, want %q", got, want)
	}
}
