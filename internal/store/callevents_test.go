package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestCallLog(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p1, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		p2, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
		ada := mustAgent(t, db, p1.ID, "Ada")
		call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p1.ID, AgentID: ada.ID, CallSID: "CA1", Direction: agentline.CallInbound,
			From: "+14155550199", To: "+14155550100", Status: agentline.CallInProgress}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if log, err := db.CallLog(ctx, p1.ID, call.ID); err != nil || len(log) != 0 || log == nil {
			t.Fatalf("empty log = %#v %v", log, err)
		}
		at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		entries := []agentline.CallLogEntry{
			{Type: "transcript", Role: "caller", Text: "Is the shop open?", At: at},
			{Type: "tool_call", Text: "opening_hours", Data: json.RawMessage(`{"name":"opening_hours","output":"{\"open\":true}"}`), At: at.Add(time.Second)},
			{Type: "transcript", Role: "agent", Text: "Yes, until six.", At: at.Add(2 * time.Second)},
		}
		if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted, EndReason: "caller_hangup", Log: entries}, callChanged); err != nil {
			t.Fatal(err)
		}
		got, err := db.CallLog(ctx, p1.ID, call.ID)
		if err != nil || len(got) != 3 {
			t.Fatalf("CallLog = %+v %v", got, err)
		}
		for i, e := range got {
			w := entries[i]
			if e.Type != w.Type || e.Role != w.Role || e.Text != w.Text || !e.At.Equal(w.At) || e.At.Location() != time.UTC {
				t.Errorf("entry %d = %+v, want %+v", i, e, w)
			}
		}
		var data map[string]string
		if err := json.Unmarshal(got[1].Data, &data); err != nil || data["output"] != `{"open":true}` || got[0].Data != nil {
			t.Fatalf("data = %s / %s (%v)", got[1].Data, got[0].Data, err)
		}
		// A report about an unknown call stores nothing.
		if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA2", Status: agentline.CallCompleted, Log: entries}, callChanged); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("log of an unknown call: %v", err)
		}
		// Cross-tenant probe.
		if log, err := db.CallLog(ctx, p2.ID, call.ID); err != nil || len(log) != 0 {
			t.Fatalf("read across projects: %v %v", log, err)
		}
		// Entries appended while a call is live come after, in order; a call
		// of another project takes none.
		more := []agentline.CallLogEntry{
			{Type: "transcript", Role: "caller", Text: "Thanks.", At: at.Add(3 * time.Second)},
			{Type: "dtmf", Text: "1", At: at.Add(4 * time.Second)},
		}
		if err := db.AppendCallLog(ctx, p1.ID, call.ID, more); err != nil {
			t.Fatal(err)
		}
		if err := db.AppendCallLog(ctx, p2.ID, call.ID, more); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("append across projects: %v", err)
		}
		if err := db.AppendCallLog(ctx, p1.ID, call.ID+1000, more); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("append to an unknown call: %v", err)
		}
		if got, err := db.CallLog(ctx, p1.ID, call.ID); err != nil || len(got) != 5 || got[3].Text != "Thanks." || got[4].Type != "dtmf" {
			t.Fatalf("CallLog after append = %+v %v", got, err)
		}
		// The log goes with its call.
		if err := db.DeleteCall(ctx, p1.ID, call.ID); err != nil {
			t.Fatal(err)
		}
		if log, err := db.CallLog(ctx, p1.ID, call.ID); err != nil || len(log) != 0 {
			t.Fatalf("log of a deleted call: %v %v", log, err)
		}
	})
}

// TestFinalStatusThatChangesNothing: the carrier's completed callback
// after the relay has recorded the call's end is answered from one read
// (ApplyCarrierStatus);
// one that still adds something (a duration, an end reason over a
// reconciled one) takes the write as before.
func TestFinalStatusThatChangesNothing(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		ada := mustAgent(t, db, p.ID, "Ada")
		if _, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: ada.ID, CallSID: "CA1", Direction: agentline.CallInbound,
			From: "+14155550199", To: "+14155550100", Status: agentline.CallInProgress}, 10); err != nil {
			t.Fatal(err)
		}
		// Ended by the carrier first, without a duration: the relay's end
		// still adds its reason, and a later callback its duration.
		if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted}, callChanged); err != nil {
			t.Fatal(err)
		}
		if c, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted, EndReason: "caller_hangup"}, callChanged); err != nil || c.EndReason != "caller_hangup" {
			t.Fatalf("the relay's end = %+v %v", c, err)
		}
		secs := 7
		if c, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted, DurationS: &secs}, callChanged); err != nil || c.DurationS == nil || *c.DurationS != 7 {
			t.Fatalf("a late duration = %+v %v", c, err)
		}
		// Now nothing is left to add: one statement, the record as it was.
		before := db.Statements()
		other := 9
		c, err := db.ApplyCarrierStatus(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted, DurationS: &other}, callChanged)
		if err != nil || c.Status != agentline.CallCompleted || c.EndReason != "caller_hangup" || *c.DurationS != 7 {
			t.Fatalf("a callback that changes nothing = %+v %v", c, err)
		}
		if n := db.Statements() - before; n != 1 {
			t.Errorf("a callback that changes nothing made %d statements, want 1 (a read)", n)
		}
		// ApplyCallEvent, which a callback takes while the call's relay
		// runs here, goes straight to the write.
		before = db.Statements()
		if _, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA1", Status: agentline.CallCompleted}, callChanged); err != nil {
			t.Fatal(err)
		}
		if n := db.Statements() - before; n < 3 {
			t.Errorf("ApplyCallEvent made %d statements, want its transaction", n)
		}
	})
}
