package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// TestStartWidgetSessionOnce: a live chat form's pending session starts
// once; a second start (or a racing one) is a conflict, so one form
// submission lets one widget session reach the provider.
func TestStartWidgetSessionOnce(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		a := mustAgent(t, db, p.ID, "Ada")
		form := agentline.DefaultFormSettings()
		form.Mode = agentline.FormLiveChat
		ch, err := db.CreateChannel(ctx, agentline.Channel{ProjectID: p.ID, AgentID: &a.ID, Type: agentline.ChannelForm, Name: "contact",
			Settings: agentline.ChannelSettings{Form: form}})
		if err != nil {
			t.Fatal(err)
		}
		pending := func(id string) agentline.WidgetSession {
			s := agentline.WidgetSession{ID: id, ProjectID: p.ID, ChannelID: ch.ID, AgentID: a.ID}
			if _, err := db.CreateLead(ctx, agentline.Lead{ProjectID: p.ID, ChannelID: ch.ID, Mode: agentline.FormLiveChat,
				Answers: map[string]any{"name": "Grace"}}, &s); err != nil {
				t.Fatal(err)
			}
			s.Origin, s.Provider, s.Model = "https://shop.example.com", agentline.ProviderOpenAI, "gpt-realtime"
			return s
		}
		s := pending("ses_gate1")
		got, err := db.StartWidgetSession(ctx, s, started)
		if err != nil || got.Provider != agentline.ProviderOpenAI || got.Origin != s.Origin {
			t.Fatalf("first start = %+v %v", got, err)
		}
		if _, err := db.StartWidgetSession(ctx, s, started); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("second start: %v, want conflict", err)
		}
		if _, err := db.StartWidgetSession(ctx, agentline.WidgetSession{ID: "ses_none", ProjectID: p.ID, ChannelID: ch.ID}, started); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("start of no session: %v, want not found", err)
		}
		// Racing starts: exactly one wins.
		s = pending("ses_gate2")
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := db.StartWidgetSession(ctx, s, started)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		won := 0
		for err := range errs {
			switch {
			case err == nil:
				won++
			case agentline.ErrorCode(err) != agentline.EConflict:
				t.Fatalf("racing start: %v", err)
			}
		}
		if won != 1 {
			t.Fatalf("%d racing starts won, want 1", won)
		}
	})
}
