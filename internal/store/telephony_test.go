package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func mustAgent(t *testing.T, db *store.DB, projectID int64, name string) agentline.Agent {
	t.Helper()
	a, err := db.CreateAgent(context.Background(), agentline.Agent{ProjectID: projectID, Name: name, Model: "gpt-realtime", Provider: agentline.ProviderOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ptr[T any](v T) *T { return &v }

func TestPhoneNumbers(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p1, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		p2, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
		ada, bob := mustAgent(t, db, p1.ID, "Ada"), mustAgent(t, db, p1.ID, "Bob")
		eve := mustAgent(t, db, p2.ID, "Eve")

		n, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p1.ID, PhoneNumber: "+14155550100", AgentID: &ada.ID, Status: agentline.NumberActive, CarrierSID: "PN1"})
		if err != nil || n.ID == 0 || *n.AgentID != ada.ID {
			t.Fatalf("CreatePhoneNumber = %+v %v", n, err)
		}
		conflicts := []struct {
			name string
			n    agentline.PhoneNumber
			code string
		}{
			{"same number", agentline.PhoneNumber{ProjectID: p2.ID, PhoneNumber: "+14155550100", Status: agentline.NumberUnassigned, CarrierSID: "PN2"}, agentline.EConflict},
			{"agent has a number", agentline.PhoneNumber{ProjectID: p1.ID, PhoneNumber: "+14155550101", AgentID: &ada.ID, Status: agentline.NumberActive, CarrierSID: "PN3"}, agentline.EConflict},
			{"agent of another project", agentline.PhoneNumber{ProjectID: p1.ID, PhoneNumber: "+14155550102", AgentID: &eve.ID, Status: agentline.NumberActive, CarrierSID: "PN4"}, agentline.EInvalid},
			{"missing project", agentline.PhoneNumber{ProjectID: 999999, PhoneNumber: "+14155550103", Status: agentline.NumberUnassigned, CarrierSID: "PN5"}, agentline.ENotFound},
		}
		for _, c := range conflicts {
			if _, err := db.CreatePhoneNumber(ctx, c.n); code(err) != c.code {
				t.Errorf("%s: err = %v, want %s", c.name, err, c.code)
			}
		}
		if pid, err := db.ProjectOf(ctx, agentline.KindPhoneNumber, n.ID); err != nil || pid != p1.ID {
			t.Fatalf("ProjectOf = %d %v", pid, err)
		}
		// Cross-tenant probes: everything scoped to p2 misses p1's number.
		if _, err := db.PhoneNumber(ctx, p2.ID, n.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("read across projects: %v", err)
		}
		if _, err := db.AgentPhoneNumber(ctx, p2.ID, ada.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("agent number across projects: %v", err)
		}
		stolen := n
		stolen.ProjectID, stolen.AgentID = p2.ID, &eve.ID
		if _, err := db.UpdatePhoneNumber(ctx, stolen); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("update across projects: %v", err)
		}
		if err := db.DeletePhoneNumber(ctx, p2.ID, n.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("delete across projects: %v", err)
		}
		if list, _ := db.PhoneNumbers(ctx, p2.ID); len(list) != 0 {
			t.Fatalf("p2 numbers = %+v", list)
		}
		// Linking a number to an agent of another project is refused.
		moved := n
		moved.AgentID = &eve.ID
		if _, err := db.UpdatePhoneNumber(ctx, moved); code(err) != agentline.EInvalid {
			t.Fatalf("link to another project's agent: %v", err)
		}

		// Relink: Bob gets a second number, then Ada's cannot move to Bob.
		second, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p1.ID, PhoneNumber: "+14155550199", AgentID: &bob.ID, Status: agentline.NumberActive, CarrierSID: "PN9"})
		if err != nil {
			t.Fatal(err)
		}
		moved.AgentID = &bob.ID
		if _, err := db.UpdatePhoneNumber(ctx, moved); code(err) != agentline.EConflict {
			t.Fatalf("second number for bob: %v", err)
		}
		if got, err := db.AgentPhoneNumber(ctx, p1.ID, bob.ID); err != nil || got.ID != second.ID {
			t.Fatalf("AgentPhoneNumber = %+v %v", got, err)
		}
		n.Status = agentline.NumberSuspended
		if got, err := db.UpdatePhoneNumber(ctx, n); err != nil || got.Status != agentline.NumberSuspended {
			t.Fatalf("suspend = %+v %v", got, err)
		}
		if got, err := db.PhoneNumberByE164(ctx, "+14155550100"); err != nil || got.ID != n.ID || got.ProjectID != p1.ID {
			t.Fatalf("PhoneNumberByE164 = %+v %v", got, err)
		}

		// Deleting an agent unassigns its number.
		if err := db.DeleteAgent(ctx, p1.ID, bob.ID); err != nil {
			t.Fatal(err)
		}
		got, err := db.PhoneNumber(ctx, p1.ID, second.ID)
		if err != nil || got.AgentID != nil || got.Status != agentline.NumberUnassigned {
			t.Fatalf("number of a deleted agent = %+v %v", got, err)
		}

		if err := db.DeletePhoneNumber(ctx, p1.ID, n.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.PhoneNumber(ctx, p1.ID, n.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("deleted number: %v", err)
		}
	})
}

func TestCalls(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p1, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		p2, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
		ada := mustAgent(t, db, p1.ID, "Ada")
		n, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p1.ID, PhoneNumber: "+14155550100", AgentID: &ada.ID, Status: agentline.NumberActive, CarrierSID: "PN1"})
		if err != nil {
			t.Fatal(err)
		}

		// Outbound: reserve, attach, then the cap.
		reserve := func(ref string) (agentline.Call, error) {
			return db.ReserveCall(ctx, agentline.Call{ProjectID: p1.ID, AgentID: ada.ID, NumberID: &n.ID, CallSID: agentline.PendingCallSID(ref),
				Direction: agentline.CallOutbound, From: n.PhoneNumber, To: "+14155550111", Status: agentline.CallQueued, StreamRef: ref}, 2)
		}
		c1, err := reserve("ref1")
		if err != nil {
			t.Fatal(err)
		}
		c1, err = db.AttachCallSID(ctx, p1.ID, c1.ID, "CA1", agentline.CallQueued)
		if err != nil || c1.CallSID != "CA1" || c1.StreamRef != "ref1" || c1.Status != agentline.CallQueued {
			t.Fatalf("AttachCallSID = %+v %v", c1, err)
		}
		c2, err := reserve("ref2")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := reserve("ref3"); code(err) != agentline.ERateLimited {
			t.Fatalf("third live call: %v", err)
		}
		if err := db.DeleteCall(ctx, p1.ID, c2.ID); err != nil {
			t.Fatal(err)
		}

		// Status events move forward only.
		at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		steps := []struct {
			status string
			want   string
		}{
			{agentline.CallRinging, agentline.CallRinging},
			{agentline.CallInProgress, agentline.CallInProgress},
			{agentline.CallRinging, agentline.CallInProgress}, // late
			{agentline.CallCompleted, agentline.CallCompleted},
			{agentline.CallInProgress, agentline.CallCompleted}, // never revived
			{agentline.CallFailed, agentline.CallCompleted},     // first final status stays
		}
		for i, s := range steps {
			e := agentline.CallEvent{CallSID: "CA1", Status: s.status, At: at.Add(time.Duration(i) * time.Second)}
			if s.status == agentline.CallCompleted {
				e.DurationS = ptr(42)
			}
			got, err := db.ApplyCallEvent(ctx, e, callChanged)
			if err != nil || got.Status != s.want {
				t.Fatalf("step %d (%s): %+v %v", i, s.status, got, err)
			}
		}
		c1, _ = db.Call(ctx, p1.ID, "CA1")
		if c1.StartedAt == nil || !c1.StartedAt.Equal(at.Add(time.Second)) || c1.EndedAt == nil || !c1.EndedAt.Equal(at.Add(3*time.Second)) || c1.DurationS == nil || *c1.DurationS != 42 {
			t.Fatalf("call times = %+v", c1)
		}

		// An unknown call to one of our numbers is an inbound call.
		in, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA2", Status: agentline.CallRinging, Direction: agentline.CallInbound, From: "+14155550123", To: n.PhoneNumber}, callChanged)
		if err != nil || in.ProjectID != p1.ID || in.AgentID != ada.ID || in.Direction != agentline.CallInbound || in.Status != agentline.CallRinging {
			t.Fatalf("inbound = %+v %v", in, err)
		}
		// It is inserted as the report leaves it (one write): the stored
		// record is the one returned.
		if got, err := db.CallBySID(ctx, "CA2"); err != nil || got.ID != in.ID || got.Status != agentline.CallRinging || got.NumberID == nil || *got.NumberID != n.ID {
			t.Fatalf("stored inbound = %+v %v", got, err)
		}
		for _, e := range []agentline.CallEvent{
			{CallSID: "CA3", Status: agentline.CallRinging, Direction: agentline.CallInbound, From: "+1", To: "+19995550000"},
			{CallSID: "CA4", Status: agentline.CallRinging, Direction: agentline.CallOutbound, From: n.PhoneNumber, To: "+14155550111"},
		} {
			if _, err := db.ApplyCallEvent(ctx, e, callChanged); !errors.Is(err, agentline.ErrNotFound) {
				t.Fatalf("unknown call %s: %v", e.CallSID, err)
			}
		}

		// Listing, filters, paging and cross-tenant probes.
		all, err := db.Calls(ctx, p1.ID, agentline.CallFilter{})
		if err != nil || len(all) != 2 || all[0].CallSID != "CA2" {
			t.Fatalf("Calls = %+v %v", all, err)
		}
		page, _ := db.Calls(ctx, p1.ID, agentline.CallFilter{Limit: 1, Before: all[0].ID})
		if len(page) != 1 || page[0].CallSID != "CA1" {
			t.Fatalf("page = %+v", page)
		}
		if done, _ := db.Calls(ctx, p1.ID, agentline.CallFilter{Status: agentline.CallCompleted, AgentID: ada.ID}); len(done) != 1 {
			t.Fatalf("completed = %+v", done)
		}
		if other, _ := db.Calls(ctx, p2.ID, agentline.CallFilter{}); len(other) != 0 {
			t.Fatalf("p2 calls = %+v", other)
		}
		if _, err := db.Call(ctx, p2.ID, "CA1"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("call across projects: %v", err)
		}
		if c, err := db.CallByStreamRef(ctx, p1.ID, "ref1"); err != nil || c.CallSID != "CA1" {
			t.Fatalf("CallByStreamRef = %+v %v", c, err)
		}
		for _, probe := range []struct {
			project int64
			ref     string
		}{{p2.ID, "ref1"}, {p1.ID, ""}, {p1.ID, "ref2"}} {
			if _, err := db.CallByStreamRef(ctx, probe.project, probe.ref); !errors.Is(err, agentline.ErrNotFound) {
				t.Fatalf("CallByStreamRef(%d, %q): %v", probe.project, probe.ref, err)
			}
		}
		if _, err := db.AttachCallSID(ctx, p2.ID, c1.ID, "CAX", agentline.CallQueued); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("attach across projects: %v", err)
		}
		if pid, err := db.ProjectOfCall(ctx, "CA1"); err != nil || pid != p1.ID {
			t.Fatalf("ProjectOfCall = %d %v", pid, err)
		}
		if _, err := db.ProjectOfCall(ctx, "CA404"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("ProjectOfCall missing: %v", err)
		}
		if c, err := db.CallBySID(ctx, "CA1"); err != nil || c.ProjectID != p1.ID || c.ID != c1.ID {
			t.Fatalf("CallBySID = %+v %v", c, err)
		}
		if _, err := db.CallBySID(ctx, "CA404"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("CallBySID missing: %v", err)
		}
		// Releasing the number keeps the call history.
		if err := db.DeletePhoneNumber(ctx, p1.ID, n.ID); err != nil {
			t.Fatal(err)
		}
		if c, err := db.Call(ctx, p1.ID, "CA1"); err != nil || c.NumberID != nil {
			t.Fatalf("call after release = %+v %v", c, err)
		}
	})
}

// TestNewInboundCallStartedByItsReport: a report of an unknown call to one
// of our numbers that starts it (in progress, with a version and a log) is
// inserted as the report leaves it, its log on the new record.
func TestNewInboundCallStartedByItsReport(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p1, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		ada := mustAgent(t, db, p1.ID, "Ada")
		n, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p1.ID, PhoneNumber: "+14155550100", AgentID: &ada.ID, Status: agentline.NumberActive, CarrierSID: "PN1"})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
		live, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CA5", Status: agentline.CallInProgress, Direction: agentline.CallInbound,
			From: "+14155550123", To: n.PhoneNumber, At: at, AgentVersion: 1, Log: []agentline.CallLogEntry{{Type: "note", Text: "hi", At: at}}}, callChanged)
		if err != nil || live.Status != agentline.CallInProgress {
			t.Fatalf("inbound in progress = %+v %v", live, err)
		}
		if got, err := db.CallBySID(ctx, "CA5"); err != nil || got.ID != live.ID || got.StartedAt == nil || !got.StartedAt.Equal(at) || got.AgentVersion != 1 {
			t.Fatalf("stored inbound in progress = %+v %v", got, err)
		}
		if l, err := db.CallLog(ctx, p1.ID, live.ID); err != nil || len(l) != 1 || l[0].Text != "hi" {
			t.Fatalf("new call's log = %+v %v", l, err)
		}
	})
}
