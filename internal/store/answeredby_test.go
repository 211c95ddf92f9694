package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// The carrier's verdict on who answered lands on the call's record and is
// read back with it; the same verdict again changes nothing (so it is
// acted on once), a new one replaces it, and another project's id finds
// no call.
func TestRecordAnsweredBy(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p1, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		p2, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
		ada := mustAgent(t, db, p1.ID, "Ada")
		call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p1.ID, AgentID: ada.ID, CallSID: "CA1", Direction: agentline.CallOutbound,
			From: "+14155550100", To: "+14155550127", Status: agentline.CallQueued}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if call.AnsweredBy != "" {
			t.Fatalf("a new call says it was answered by %q", call.AnsweredBy)
		}
		steps := []struct {
			verdict string
			changed bool
		}{
			{agentline.AnsweredByMachineStart, true},
			{agentline.AnsweredByMachineStart, false},
			{agentline.AnsweredByMachineEndBeep, true},
		}
		for _, s := range steps {
			got, changed, err := db.RecordAnsweredBy(ctx, p1.ID, "CA1", s.verdict)
			if err != nil || changed != s.changed || got.AnsweredBy != s.verdict || got.ID != call.ID {
				t.Fatalf("RecordAnsweredBy(%s) = %+v, changed %v, %v; want changed %v", s.verdict, got, changed, err, s.changed)
			}
		}
		if got, err := db.Call(ctx, p1.ID, "CA1"); err != nil || got.AnsweredBy != agentline.AnsweredByMachineEndBeep {
			t.Fatalf("Call = %+v %v", got, err)
		}
		if list, err := db.Calls(ctx, p1.ID, agentline.CallFilter{}); err != nil || len(list) != 1 || list[0].AnsweredBy != agentline.AnsweredByMachineEndBeep {
			t.Fatalf("Calls = %+v %v", list, err)
		}
		if _, _, err := db.RecordAnsweredBy(ctx, p2.ID, "CA1", agentline.AnsweredByHuman); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("across projects: %v", err)
		}
		if _, _, err := db.RecordAnsweredBy(ctx, p1.ID, "CA2", agentline.AnsweredByHuman); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("unknown call: %v", err)
		}
	})
}
