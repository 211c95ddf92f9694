package app_test

import (
	"slices"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
)

// callRecord is GET /api/calls/{call_sid}: the call with its log.
type callRecord struct {
	agentline.Call
	Events []agentline.CallLogEntry `json:"events"`
}

// acmeWithAdaOnTheLine makes the owner (owner@example.com) with a
// project, Acme, whose agent Ada greets callers and answers a number,
// +14155550100: what the sandbox's phone tests call from. It returns the
// owner's token, the project and the agent.
func acmeWithAdaOnTheLine(t *testing.T, s *apptest.Server) (string, agentline.Project, agentline.Agent) {
	t.Helper()
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var a agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "greeting": "Hello, this is Ada."}, &a)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/telephony/numbers", tok, map[string]any{"phone_number": "+14155550100", "agent_id": a.ID}, nil)
	return tok, p, a
}

// In the sandbox an outbound call is played whole by the pretend carrier
// (before, it stayed queued forever): it rings, the callee answers, the
// agent greets them, they say something, they hang up, and the record
// follows the documented statuses, queued, ringing, in-progress, then
// completed with a duration. A call hung up before it is answered ends
// canceled, never completed, and as a conversation that never connected.
func TestSandboxOutboundCallIsPlayed(t *testing.T) {
	t.Parallel()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "localhost",
	})
	tok, _, a := acmeWithAdaOnTheLine(t, s)

	var placed struct {
		CallSID string `json:"call_sid"`
		Status  string `json:"status"`
	}
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/telephony/outbound", tok, map[string]string{"to_number": "+14155550123"}, &placed)
	seen := []string{placed.Status}
	var rec callRecord
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the call did not end within 40 s: statuses %v, record %+v", seen, rec.Call)
		}
		s.Must(t, 200, "GET", "/api/calls/"+placed.CallSID, tok, nil, &rec)
		// initiated, "not ringing yet" like queued, may show for a moment.
		if rec.Status != seen[len(seen)-1] && rec.Status != agentline.CallInitiated {
			seen = append(seen, rec.Status)
		}
		if agentline.CallStatusFinal(rec.Status) {
			break
		}
	}
	if want := []string{"queued", "ringing", "in-progress", "completed"}; !slices.Equal(seen, want) {
		t.Errorf("statuses %v, want %v", seen, want)
	}
	if rec.DurationS == nil || *rec.DurationS < 1 || rec.StartedAt == nil {
		t.Errorf("duration %v, started %v: want a non-zero duration of an answered call", rec.DurationS, rec.StartedAt)
	}
	said := map[string]bool{}
	for _, e := range rec.Events {
		if e.Type == "transcript" && e.Text != "" {
			said[e.Role] = true
		}
	}
	if !said["agent"] || !said["caller"] {
		t.Errorf("transcript %+v: want the agent's greeting and the callee's line", rec.Events)
	}

	// Hung up while it rings: canceled, not completed.
	s.Must(t, 201, "POST", "/api/agents/"+itoa(a.ID)+"/telephony/outbound", tok, map[string]string{"to_number": "+14155550124"}, &placed)
	s.Must(t, 204, "DELETE", "/api/agents/"+itoa(a.ID)+"/telephony/calls/"+placed.CallSID, tok, nil, nil)
	time.Sleep(1500 * time.Millisecond) // past the ring: the carrier must not answer it
	s.Must(t, 200, "GET", "/api/calls/"+placed.CallSID, tok, nil, &rec)
	if rec.Status != agentline.CallCanceled || rec.EndReason != "api_hangup" || rec.StartedAt != nil {
		t.Errorf("hung up before answer: status %q, end reason %q, started %v; want canceled, api_hangup, never started", rec.Status, rec.EndReason, rec.StartedAt)
	}
	var conv agentline.Conversation
	s.Must(t, 200, "GET", "/api/conversations/"+agentline.CallConversationID(rec.ID), tok, nil, &conv)
	if conv.Status != agentline.ConversationFailed {
		t.Errorf("conversation of the unanswered call: %q, want failed (never connected)", conv.Status)
	}
}
