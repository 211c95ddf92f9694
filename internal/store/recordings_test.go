package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Recordings by project: a pending one enqueues its upload job with it,
// status moves clear the spool, another project cannot read one, a
// conversation shows its call's recording, retention lists only the
// stored ones older than their project's days (0 keeps), and deleting the
// call removes the row.
func TestRecordings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		var jobs []agentline.Job
		db.SetOutbox(store.OutboxOptions{Enqueue: func(_ context.Context, _ *sql.Tx, j []agentline.Job) error { jobs = append(jobs, j...); return nil }})
		call := func(p agentline.Project, a agentline.Agent, sid string) int64 {
			t.Helper()
			c, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: a.ID, CallSID: sid, Direction: agentline.CallInbound,
				From: "+14155550199", To: "+14155550100", Status: agentline.CallInProgress}, 10)
			if err != nil {
				t.Fatal(err)
			}
			return c.ID
		}
		c1, c2, c3 := call(f.p1, f.a1, "CA1"), call(f.p1, f.a1, "CA2"), call(f.p2, f.a2, "CA3")
		add := func(p agentline.Project, id int64, status, spool string) {
			t.Helper()
			if err := db.AddRecording(ctx, agentline.CallRecording{CallID: id, ProjectID: p.ID, Key: agentline.RecordingKey(p.ID, id),
				Status: status, SizeBytes: 64044, DurationMS: 2000, Spool: spool}); err != nil {
				t.Fatal(err)
			}
		}
		add(f.p1, c1, agentline.RecordingStored, "")
		add(f.p1, c2, agentline.RecordingPending, "/spool/call-1.wav")
		add(f.p2, c3, agentline.RecordingStored, "")
		if len(jobs) != 1 || jobs[0] != (agentline.UploadRecording{ProjectID: f.p1.ID, CallID: c2}) {
			t.Fatalf("jobs = %v, want the pending one's upload", jobs)
		}
		if r, err := db.CallRecording(ctx, f.p1.ID, c2); err != nil || r.Spool != "/spool/call-1.wav" || r.Status != agentline.RecordingPending {
			t.Fatalf("pending: %+v %v", r, err)
		}
		if err := db.SetRecordingStatus(ctx, f.p1.ID, c2, agentline.RecordingStored, ""); err != nil {
			t.Fatal(err)
		}
		if r, _ := db.CallRecording(ctx, f.p1.ID, c2); r.Spool != "" || r.Status != agentline.RecordingStored {
			t.Fatalf("stored: %+v", r)
		}
		if _, err := db.CallRecording(ctx, f.p2.ID, c1); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("another project's recording: %v", err)
		}
		conv, err := db.Conversation(ctx, f.p1.ID, agentline.CallConversationID(c1))
		if err != nil || conv.Recording == nil || *conv.Recording != (agentline.Recording{Status: "stored", DurationMS: 2000, SizeBytes: 64044,
			ContentType: "audio/wav", URL: fmt.Sprintf("/api/conversations/call_%d/recording", c1)}) {
			t.Fatalf("conversation's recording: %+v %v", conv.Recording, err)
		}

		// p1 keeps recordings 2 days, p2 forever (0); all are 3 days old.
		f.p1.RecordingRetentionDays = 2
		if _, err := db.UpdateProject(ctx, f.p1); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		old, err := db.ExpiredRecordings(ctx, now.Add(72*time.Hour), 10)
		if err != nil || len(old) != 2 || old[0].ProjectID != f.p1.ID || old[1].ProjectID != f.p1.ID {
			t.Fatalf("expired in 3 days: %+v %v", old, err)
		}
		if old, _ := db.ExpiredRecordings(ctx, now.Add(72*time.Hour), 1); len(old) != 1 {
			t.Fatalf("limit 1 gave %d", len(old))
		}
		if old, _ := db.ExpiredRecordings(ctx, now.Add(24*time.Hour), 10); len(old) != 0 {
			t.Fatalf("expired in 1 day: %+v", old)
		}
		if err := db.SetRecordingStatus(ctx, f.p1.ID, c1, agentline.RecordingDeleted, ""); err != nil {
			t.Fatal(err)
		}
		if old, _ := db.ExpiredRecordings(ctx, now.Add(72*time.Hour), 10); len(old) != 1 || old[0].CallID != c2 {
			t.Fatalf("after deleting one: %+v", old)
		}
		if err := db.DeleteConversation(ctx, f.p1.ID, agentline.CallConversationID(c2)); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CallRecording(ctx, f.p1.ID, c2); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("recording of a deleted call: %v", err)
		}
	})
}
