package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestAgentVersions(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "v@example.com")
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		other, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
		a, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ada", Instructions: "v1", Model: "gpt-realtime",
			Provider: agentline.ProviderOpenAI, Voice: "marin", Language: "en", Analysis: agentline.DefaultAnalysis()})
		if err != nil || a.Version != 1 || a.PublishedVersion != 1 {
			t.Fatalf("CreateAgent = %+v %v", a, err)
		}
		// A save that changes no setting makes no version.
		a.Name = "Ada Lovelace"
		if a, err = db.UpdateAgent(ctx, a); err != nil || a.Version != 1 {
			t.Fatalf("rename = %+v %v", a, err)
		}
		if _, err := db.CreateTool(ctx, agentline.WebhookTool{ProjectID: p.ID, AgentID: a.ID, Name: "lookup", Parameters: []byte(`{"type":"object"}`),
			URL: "https://example.com/x", Method: "POST", TimeoutMS: 1000}); err != nil {
			t.Fatal(err)
		}
		a.Instructions = "v2"
		if a, err = db.UpdateAgent(ctx, a); err != nil || a.Version != 2 || a.PublishedVersion != 2 {
			t.Fatalf("second save = %+v %v", a, err)
		}
		v2, err := db.AgentVersion(ctx, p.ID, a.ID, 2)
		if err != nil || v2.Settings.Instructions != "v2" || len(v2.Settings.Tools) != 1 || v2.Settings.Tools[0].Name != "lookup" || !v2.Published {
			t.Fatalf("version 2 = %+v %v", v2, err)
		}
		// Review before publishing: the save is a draft; conversations run
		// the published version, a test the draft.
		a.ReviewBeforePublish, a.Instructions = true, "v3 draft"
		if a, err = db.UpdateAgent(ctx, a); err != nil || a.Version != 3 || a.PublishedVersion != 2 || a.Instructions != "v3 draft" {
			t.Fatalf("draft save = %+v %v", a, err)
		}
		run, err := db.PublishedAgent(ctx, p.ID, a.ID)
		if err != nil || run.Instructions != "v2" || run.Running != 2 || run.Name != "Ada Lovelace" {
			t.Fatalf("PublishedAgent = %+v %v", run, err)
		}
		draft, err := db.AgentAtVersion(ctx, p.ID, a.ID, 0)
		if err != nil || draft.Instructions != "v3 draft" || draft.Running != 3 {
			t.Fatalf("AgentAtVersion(0) = %+v %v", draft, err)
		}
		// Rollback: publishing an older version.
		if a, err = db.PublishAgentVersion(ctx, p.ID, a.ID, 1); err != nil || a.PublishedVersion != 1 || a.Instructions != "v3 draft" {
			t.Fatalf("publish 1 = %+v %v", a, err)
		}
		if run, _ = db.PublishedAgent(ctx, p.ID, a.ID); run.Instructions != "v1" || run.Running != 1 {
			t.Fatalf("after rollback runs %+v", run)
		}
		// A call admitted with its agent runs the version it records, else
		// the published one: what PublishedAgent and AgentAtVersion give.
		for _, c := range []struct {
			sid          string
			version      int
			instructions string
		}{{"CApublished", 0, "v1"}, {"CAdraft", 3, "v3 draft"}, {"CAtwo", 2, "v2"}} {
			if _, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: a.ID, CallSID: c.sid, Direction: agentline.CallTest,
				Status: agentline.CallQueued, AgentVersion: c.version}, 10); err != nil {
				t.Fatal(err)
			}
			var read agentline.Call
			call, run, err := db.AdmitCallStream(ctx, c.sid, "test:"+c.sid, time.Now().Add(time.Hour),
				func(call agentline.Call, run agentline.Agent) (agentline.CallEvent, error) {
					read = call
					return agentline.CallEvent{CallSID: call.CallSID, Status: agentline.CallInProgress, AgentVersion: run.Running}, nil
				}, nil)
			want := max(c.version, 1)
			if err != nil || read.CallSID != c.sid || read.AgentVersion != c.version || run.ID != a.ID || run.Name != "Ada Lovelace" ||
				run.Instructions != c.instructions || run.Running != want || run.Analysis.Summary != a.Analysis.Summary ||
				call.Status != agentline.CallInProgress || call.AgentVersion != want {
				t.Fatalf("AdmitCallStream(%s) = %+v, %+v %v (read %+v)", c.sid, call, run, err, read)
			}
		}
		admit := func(agentline.Call, agentline.Agent) (agentline.CallEvent, error) {
			t.Error("admit asked about no call")
			return agentline.CallEvent{}, nil
		}
		if _, _, err := db.AdmitCallStream(ctx, "CA404", "test:CA404", time.Now().Add(time.Hour), admit, nil); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("AdmitCallStream of no call: %v", err)
		}
		list, err := db.AgentVersions(ctx, p.ID, a.ID, 0, 10)
		if err != nil || len(list) != 3 || list[0].Version != 3 || list[2].Version != 1 || !list[2].Published || list[0].Published {
			t.Fatalf("AgentVersions = %+v %v", list, err)
		}
		if page, _ := db.AgentVersions(ctx, p.ID, a.ID, 3, 1); len(page) != 1 || page[0].Version != 2 {
			t.Fatalf("page after 3 = %+v", page)
		}
		diff, err := list[2].Settings.Diff(list[0].Settings)
		if err != nil || len(diff) != 2 || diff[0].Field != "instructions" || diff[1].Field != "tools" {
			t.Fatalf("diff 1..3 = %+v %v", diff, err)
		}
		// Unknown versions and other projects are not found.
		for _, err := range []error{
			func() error { _, err := db.AgentVersion(ctx, p.ID, a.ID, 9); return err }(),
			func() error { _, err := db.AgentVersion(ctx, other.ID, a.ID, 1); return err }(),
			func() error { _, err := db.PublishAgentVersion(ctx, p.ID, a.ID, 9); return err }(),
			func() error { _, err := db.PublishAgentVersion(ctx, other.ID, a.ID, 1); return err }(),
			func() error { _, err := db.PublishedAgent(ctx, other.ID, a.ID); return err }(),
		} {
			if !errors.Is(err, agentline.ErrNotFound) {
				t.Fatalf("want not found, got %v", err)
			}
		}
		if l, err := db.AgentVersions(ctx, other.ID, a.ID, 0, 10); err != nil || len(l) != 0 {
			t.Fatalf("versions across projects = %+v %v", l, err)
		}
		// Turning review off publishes the latest.
		a.ReviewBeforePublish = false
		if a, err = db.UpdateAgent(ctx, a); err != nil || a.Version != 3 || a.PublishedVersion != 3 {
			t.Fatalf("review off = %+v %v", a, err)
		}
	})
}

func TestConversationsRecordTheAgentVersion(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "c@example.com")
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		a, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ada", Instructions: "v1", Model: "gpt-realtime",
			Provider: agentline.ProviderOpenAI, Voice: "marin", Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := db.CreateChannel(ctx, agentline.Channel{ProjectID: p.ID, AgentID: &a.ID, Type: agentline.ChannelVoiceWidget, Name: "w"})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 3)
		for i, v := range []int{1, 2, 0} {
			id, _ := agentline.NewSessionID()
			ids[i] = id
			if _, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: id, ProjectID: p.ID, ChannelID: ch.ID, AgentID: a.ID,
				Provider: agentline.ProviderOpenAI, Model: "gpt-realtime", AgentVersion: v}, nil); err != nil {
				t.Fatal(i, err)
			}
		}
		c, err := db.ReserveCall(ctx, agentline.Call{ProjectID: p.ID, AgentID: a.ID, CallSID: "CAtest", Direction: agentline.CallTest,
			Status: agentline.CallQueued, AgentVersion: 2}, 10)
		if err != nil || c.AgentVersion != 2 {
			t.Fatalf("ReserveCall = %+v %v", c, err)
		}
		got, err := db.Conversations(ctx, p.ID, agentline.ConversationFilter{AgentVersion: 2})
		if err != nil || len(got) != 2 {
			t.Fatalf("filter agent_version 2 = %d %v", len(got), err)
		}
		for _, conv := range got {
			if conv.AgentVersion == nil || *conv.AgentVersion != 2 {
				t.Fatalf("conversation %s agent_version = %v", conv.ID, conv.AgentVersion)
			}
		}
		all, _ := db.Conversations(ctx, p.ID, agentline.ConversationFilter{})
		nulls := 0
		for _, conv := range all {
			if conv.AgentVersion == nil {
				nulls++
			}
		}
		if len(all) != 4 || nulls != 1 {
			t.Fatalf("all = %d, without a version %d", len(all), nulls)
		}
		// Version 2's widget session was analysed a success; its call was
		// not analysed.
		at := time.Now().UTC().Format("2006-01-02 15:04:05")
		mustExec(t, db, fmt.Sprintf(`INSERT INTO conversation_analyses (conversation_id, project_id, agent_id, status, summary, success, created_at, updated_at)
			VALUES ('%s', %d, %d, 'done', 's', TRUE, '%s', '%s')`, ids[1], p.ID, a.ID, at, at))
		stats, err := db.VersionStats(ctx, p.ID, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil || len(stats) != 3 {
			t.Fatalf("VersionStats = %+v %v", stats, err)
		}
		byVersion := map[int]int64{}
		for _, s := range stats {
			v := 0
			if s.AgentVersion != nil {
				v = *s.AgentVersion
			}
			analysed := v == 2
			if s.AgentID != a.ID || (s.SuccessRate != nil) != analysed || s.AvgTurnLatencyMS != nil ||
				analysed && (s.Evaluated != 1 || s.Successes != 1 || *s.SuccessRate != 1) {
				t.Fatalf("version %d stat %+v", v, s)
			}
			byVersion[v] = s.Conversations
		}
		if byVersion[0] != 1 || byVersion[1] != 1 || byVersion[2] != 2 {
			t.Fatalf("conversations per version = %v", byVersion)
		}
		// Admission records the version a call runs.
		call, err := db.ApplyCallEvent(ctx, agentline.CallEvent{CallSID: "CAtest", Status: agentline.CallInProgress, AgentVersion: 1}, nil)
		if err != nil || call.AgentVersion != 1 {
			t.Fatalf("ApplyCallEvent = %+v %v", call, err)
		}
	})
}
