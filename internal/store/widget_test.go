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

// widgetFixture is two projects, each with an agent and a channel.
type widgetFixture struct {
	p1, p2 agentline.Project
	a1, a2 agentline.Agent
	c1, c2 agentline.Channel
}

func newWidgetFixture(t *testing.T, db *store.DB) widgetFixture {
	t.Helper()
	ctx := context.Background()
	u := mustUser(t, db, "owner@example.com")
	var f widgetFixture
	f.p1, _ = db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
	f.p2, _ = db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
	var err error
	for _, x := range []struct {
		p *agentline.Project
		a *agentline.Agent
		c *agentline.Channel
	}{{&f.p1, &f.a1, &f.c1}, {&f.p2, &f.a2, &f.c2}} {
		*x.a, err = db.CreateAgent(ctx, agentline.Agent{ProjectID: x.p.ID, Name: "Ada", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI})
		if err != nil {
			t.Fatal(err)
		}
		ch := agentline.Channel{ProjectID: x.p.ID, AgentID: &x.a.ID, Type: agentline.ChannelVoiceWidget, Name: "site"}
		if err := ch.Validate(); err != nil {
			t.Fatal(err)
		}
		if *x.c, err = db.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestChannelsAreScopedToTheirProject(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		got, err := db.Channel(ctx, f.p1.ID, f.c1.ID)
		if err != nil || got.Name != "site" || *got.AgentID != f.a1.ID || got.Settings.Position != "bottom-right" {
			t.Fatalf("Channel = %+v %v", got, err)
		}
		if pid, err := db.ProjectOf(ctx, agentline.KindChannel, f.c1.ID); err != nil || pid != f.p1.ID {
			t.Fatalf("ProjectOf = %d %v", pid, err)
		}
		// Cross-tenant probes.
		if _, err := db.Channel(ctx, f.p2.ID, f.c1.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("read across projects: %v", err)
		}
		stolen := f.c1
		stolen.ProjectID = f.p2.ID
		if _, err := db.UpdateChannel(ctx, stolen); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("update across projects: %v", err)
		}
		if err := db.DeleteChannel(ctx, f.p2.ID, f.c1.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("delete across projects: %v", err)
		}
		if list, _ := db.Channels(ctx, f.p2.ID); len(list) != 1 || list[0].ID != f.c2.ID {
			t.Fatalf("p2 channels = %+v", list)
		}
		c := f.c1
		c.Name, c.Settings.Color, c.Settings.ShowTranscript = "renamed", "#ff0000", true
		got, err = db.UpdateChannel(ctx, c)
		if err != nil || got.Name != "renamed" || got.Settings.Color != "#ff0000" || !got.Settings.ShowTranscript {
			t.Fatalf("UpdateChannel = %+v %v", got, err)
		}
		// Deleting the agent leaves the channel without one.
		if err := db.DeleteAgent(ctx, f.p1.ID, f.a1.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.Channel(ctx, f.p1.ID, f.c1.ID); got.AgentID != nil {
			t.Fatalf("agent_id after agent deleted = %v", *got.AgentID)
		}
		if err := db.DeleteChannel(ctx, f.p1.ID, f.c1.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Channel(ctx, f.p1.ID, f.c1.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("deleted channel: %v", err)
		}
	})
}

func TestWidgetKeys(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		if _, err := db.WidgetKey(ctx, f.p1.ID, f.c1.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("no key yet: %v", err)
		}
		k, err := db.SetWidgetKey(ctx, f.p1.ID, f.c1.ID, "hash1", "svc_pk_abcd", nil)
		if err != nil || k.Prefix != "svc_pk_abcd" || k.RateLimitPerMinute != agentline.DefaultRateLimitPerMinute ||
			k.RateLimitPerDay != nil || len(k.AllowedOrigins) != 0 || k.LastUsedAt != nil {
			t.Fatalf("SetWidgetKey = %+v %v", k, err)
		}
		// A key for another project's channel cannot be made.
		if _, err := db.SetWidgetKey(ctx, f.p2.ID, f.c1.ID, "hash9", "svc_pk_zzzz", nil); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("key across projects: %v", err)
		}
		day := int64(1000)
		k.AllowedOrigins, k.RateLimitPerMinute, k.RateLimitPerDay = []string{"https://a.example.com", "*.example.org"}, 5, &day
		if k, err = db.UpdateWidgetKey(ctx, k); err != nil || k.RateLimitPerMinute != 5 || *k.RateLimitPerDay != 1000 || len(k.AllowedOrigins) != 2 {
			t.Fatalf("UpdateWidgetKey = %+v %v", k, err)
		}
		stolen := k
		stolen.ProjectID = f.p2.ID
		if _, err := db.UpdateWidgetKey(ctx, stolen); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("update across projects: %v", err)
		}
		if got, err := db.WidgetKeyByHash(ctx, "hash1"); err != nil || got.ChannelID != f.c1.ID || got.ProjectID != f.p1.ID {
			t.Fatalf("WidgetKeyByHash = %+v %v", got, err)
		}
		used := time.Now().UTC().Truncate(time.Second)
		if err := db.TouchWidgetKey(ctx, k.ID, used); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.WidgetKey(ctx, f.p1.ID, f.c1.ID); got.LastUsedAt == nil || !got.LastUsedAt.Equal(used) {
			t.Fatalf("last_used_at = %v", got.LastUsedAt)
		}
		// Rotation: the old hash stops working; origins and limits stay.
		rotated, err := db.SetWidgetKey(ctx, f.p1.ID, f.c1.ID, "hash2", "svc_pk_efgh", nil)
		if err != nil || rotated.ID != k.ID || rotated.Prefix != "svc_pk_efgh" || rotated.RateLimitPerMinute != 5 || rotated.LastUsedAt != nil {
			t.Fatalf("rotate = %+v %v", rotated, err)
		}
		if _, err := db.WidgetKeyByHash(ctx, "hash1"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("old hash after rotation: %v", err)
		}
		if err := db.DeleteWidgetKey(ctx, f.p2.ID, f.c1.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("revoke across projects: %v", err)
		}
		if err := db.DeleteWidgetKey(ctx, f.p1.ID, f.c1.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.WidgetKeyByHash(ctx, "hash2"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("revoked key: %v", err)
		}
	})
}

func TestWidgetSessionsAndAnalytics(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		day1 := time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC)
		s1, err := db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: "ses_1", ProjectID: f.p1.ID, ChannelID: f.c1.ID,
			AgentID: f.a1.ID, Origin: "https://shop.example.com", Provider: agentline.ProviderOpenAI, Model: "gpt-realtime", StartedAt: day1}, started)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateWidgetSession(ctx, s1, started); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("duplicate id: %v", err)
		}
		db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: "ses_2", ProjectID: f.p1.ID, ChannelID: f.c1.ID, AgentID: f.a1.ID, StartedAt: day1.Add(2 * time.Minute)}, started)
		db.CreateWidgetSession(ctx, agentline.WidgetSession{ID: "ses_other", ProjectID: f.p2.ID, ChannelID: f.c2.ID, AgentID: f.a2.ID, StartedAt: day1}, started)

		ev := func(typ string, at time.Time, data string) agentline.SessionEvent {
			return agentline.SessionEvent{Type: typ, At: at, Data: json.RawMessage(data)}
		}
		err = db.AddSessionEvents(ctx, f.p1.ID, "ses_1", []agentline.SessionEvent{
			ev(agentline.EventTranscript, day1.Add(time.Second), `{"role":"user","text":"hi"}`),
			ev(agentline.EventToolCall, day1.Add(2*time.Second), `{"name":"lookup"}`),
			ev(agentline.EventError, day1.Add(3*time.Second), `{"message":"mic"}`),
			ev(agentline.EventSessionEnded, day1.Add(90*time.Second), ``),
			ev(agentline.EventSessionEnded, day1.Add(200*time.Second), ``),
		}, ended)
		if err != nil {
			t.Fatal(err)
		}
		// Cross-tenant probes.
		if err := db.AddSessionEvents(ctx, f.p2.ID, "ses_1", nil, ended); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("events across projects: %v", err)
		}
		if _, err := db.WidgetSession(ctx, f.p2.ID, "ses_1"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("read across projects: %v", err)
		}
		if _, err := db.StartWidgetSession(ctx, agentline.WidgetSession{ID: "ses_1", ProjectID: f.p1.ID, ChannelID: f.c2.ID}, started); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("start in another channel: %v", err)
		}
		got, err := db.WidgetSession(ctx, f.p1.ID, "ses_1")
		if err != nil || got.EndedAt == nil || got.DurationMS != 90_000 || got.ToolCalls != 1 || got.Errors != 1 || got.Origin != "https://shop.example.com" {
			t.Fatalf("session = %+v %v", got, err)
		}

		list, err := db.WidgetSessions(ctx, f.p1.ID, agentline.SessionFilter{Limit: 10})
		if err != nil || len(list) != 2 || list[0].ID != "ses_2" || list[1].ID != "ses_1" || len(list[1].Events) != 5 || len(list[0].Events) != 0 {
			t.Fatalf("WidgetSessions = %+v %v", list, err)
		}
		if string(list[1].Events[0].Data) != `{"role":"user","text":"hi"}` || list[1].Events[3].Type != agentline.EventSessionEnded {
			t.Fatalf("events = %+v", list[1].Events)
		}
		if list, _ := db.WidgetSessions(ctx, f.p1.ID, agentline.SessionFilter{Limit: 1, Offset: 1}); len(list) != 1 || list[0].ID != "ses_1" {
			t.Fatalf("page 2 = %+v", list)
		}
		if list, _ := db.WidgetSessions(ctx, f.p1.ID, agentline.SessionFilter{Limit: 10, From: day1.Add(time.Minute)}); len(list) != 1 || list[0].ID != "ses_2" {
			t.Fatalf("from filter = %+v", list)
		}
		if list, _ := db.WidgetSessions(ctx, f.p1.ID, agentline.SessionFilter{Limit: 10, ChannelID: f.c2.ID}); len(list) != 0 {
			t.Fatalf("channel filter = %+v", list)
		}

		rows, err := db.SessionAnalytics(ctx, f.p1.ID, day1.Add(-24*time.Hour), day1.Add(24*time.Hour))
		if err != nil || len(rows) != 2 {
			t.Fatalf("SessionAnalytics = %+v %v", rows, err)
		}
		want := []agentline.AnalyticsRow{
			{Day: "2026-03-01", ChannelID: f.c1.ID, Sessions: 1, Minutes: 1.5, ToolCalls: 1, Errors: 1},
			{Day: "2026-03-02", ChannelID: f.c1.ID, Sessions: 1},
		}
		for i := range want {
			if rows[i] != want[i] {
				t.Fatalf("row %d = %+v, want %+v", i, rows[i], want[i])
			}
		}
	})
}

// A rotation and the settings given with it are one write: when the
// settings fail, the old key still works with its old settings.
func TestSetWidgetKeyIsOneTransaction(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		if _, err := db.SetWidgetKey(ctx, f.p1.ID, f.c1.ID, "hash1", "svc_pk_abcd", nil); err != nil {
			t.Fatal(err)
		}
		refused := agentline.Invalid("rate_limit_per_minute", "no")
		_, err := db.SetWidgetKey(ctx, f.p1.ID, f.c1.ID, "hash2", "svc_pk_efgh", func(k *agentline.WidgetKey) error {
			k.RateLimitPerMinute = 7
			return refused
		})
		if !errors.Is(err, refused) {
			t.Fatalf("failed change: %v", err)
		}
		if k, err := db.WidgetKeyByHash(ctx, "hash1"); err != nil || k.Prefix != "svc_pk_abcd" || k.RateLimitPerMinute != agentline.DefaultRateLimitPerMinute {
			t.Fatalf("old key after a failed rotation = %+v, %v", k, err)
		}
		if _, err := db.WidgetKeyByHash(ctx, "hash2"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("new hash after a failed rotation: %v", err)
		}
		k, err := db.SetWidgetKey(ctx, f.p1.ID, f.c1.ID, "hash3", "svc_pk_ijkl", func(k *agentline.WidgetKey) error {
			k.RateLimitPerMinute, k.AllowedOrigins = 7, []string{"https://a.example.com"}
			return nil
		})
		if err != nil || k.Prefix != "svc_pk_ijkl" || k.RateLimitPerMinute != 7 || len(k.AllowedOrigins) != 1 {
			t.Fatalf("rotation with settings = %+v, %v", k, err)
		}
	})
}
