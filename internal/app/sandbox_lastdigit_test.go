package app_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// The sandbox's carrier answers an outbound call by the last digit of the
// number, as documented: 8 is busy and 9 rings out (each ends with
// Twilio's status, never in progress, as a failed conversation), 7 is an
// answering machine (answered; machine detection says machine_start, or
// machine_end_beep after its beep when asked to wait for the message's
// end), and any other digit a person (detection says human; the agent and
// the callee both speak).
func TestSandboxAnswersByLastDigit(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "localhost",
	})
	tok, p, a := acmeWithAdaOnTheLine(t, s)

	answered := []string{"queued", "ringing", "in-progress", "completed"}
	cases := []struct {
		to, detect string
		statuses   []string
		answeredBy string
		talked     bool // both sides have transcript lines
	}{
		{"+14155550128", "", []string{"queued", "busy"}, "", false},
		{"+14155550129", "", []string{"queued", "ringing", "no-answer"}, "", false},
		{"+14155550127", carrier.AMDEnable, answered, agentline.AnsweredByMachineStart, false},
		{"+14155550137", carrier.AMDDetectMessageEnd, answered, agentline.AnsweredByMachineEndBeep, false},
		{"+14155550123", carrier.AMDEnable, answered, agentline.AnsweredByHuman, true},
	}
	sids := make([]string, len(cases))
	seen := make([][]string, len(cases))
	for i, c := range cases {
		if c.detect == "" { // the spec's single-call endpoint, which asks for no detection
			var placed struct {
				CallSID string `json:"call_sid"`
				Status  string `json:"status"`
			}
			s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/telephony/outbound", tok, map[string]string{"to_number": c.to}, &placed)
			sids[i], seen[i] = placed.CallSID, []string{placed.Status}
			continue
		}
		call, err := s.App.PlaceCall(context.Background(), p.ID, a.ID, c.to, telephony.CallOptions{MachineDetection: c.detect})
		if err != nil {
			t.Fatal(err)
		}
		sids[i], seen[i] = call.CallSID, []string{call.Status}
	}
	records := make([]callRecord, len(cases))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		live := 0
		for i := range cases {
			if agentline.CallStatusFinal(records[i].Status) {
				continue
			}
			s.Must(t, 200, "GET", "/api/calls/"+sids[i], tok, nil, &records[i])
			// initiated, "not ringing yet" like queued, may show for a moment.
			if st := records[i].Status; st != seen[i][len(seen[i])-1] && st != agentline.CallInitiated {
				seen[i] = append(seen[i], st)
			}
			if !agentline.CallStatusFinal(records[i].Status) {
				live++
			}
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls still live after 60 s: %v", seen)
		}
	}
	for i, c := range cases {
		rec := records[i]
		said := map[string]bool{}
		for _, e := range rec.Events {
			if e.Type == "transcript" && e.Text != "" {
				said[e.Role] = true
			}
		}
		if !slices.Equal(seen[i], c.statuses) || rec.AnsweredBy != c.answeredBy || (rec.StartedAt != nil) != (c.answeredBy != "" || c.talked) {
			t.Errorf("%s: statuses %v, answered by %q, started %v; want %v, %q", c.to, seen[i], rec.AnsweredBy, rec.StartedAt, c.statuses, c.answeredBy)
		}
		// The machine's greeting and beep play on the stream before it
		// records and hangs up.
		if agentline.AnsweredByMachine(c.answeredBy) && (rec.DurationS == nil || *rec.DurationS < 3) {
			t.Errorf("%s: duration %v, want the machine's greeting at least", c.to, rec.DurationS)
		}
		if c.talked && (!said["agent"] || !said["caller"]) {
			t.Errorf("%s: transcript %+v: want the agent's greeting and the person's line", c.to, rec.Events)
		}
		if rec.StartedAt == nil {
			var conv agentline.Conversation
			s.Must(t, 200, "GET", "/api/conversations/"+agentline.CallConversationID(rec.ID), tok, nil, &conv)
			if conv.Status != agentline.ConversationFailed {
				t.Errorf("%s: conversation %q, want failed (never connected)", c.to, conv.Status)
			}
		}
	}
}
