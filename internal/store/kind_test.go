package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Every kind has a table (a missing id is not_found, named by the kind's
// noun); anything else, a table name included, is refused before any SQL.
func TestProjectOfKinds(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, k := range []agentline.Kind{agentline.KindAgent, agentline.KindTool, agentline.KindKnowledgeDocument,
			agentline.KindChannel, agentline.KindLead, agentline.KindPhoneNumber, agentline.KindCall, agentline.KindWebhook,
			agentline.KindInvite, agentline.KindCampaign, agentline.KindTestScenario, agentline.KindTestRun} {
			_, err := db.ProjectOf(ctx, k, 1<<40)
			var e *agentline.Error
			if !errors.Is(err, agentline.ErrNotFound) || !errors.As(err, &e) || e.Message != k.Noun()+" not found" {
				t.Errorf("%s: %v, want %s not found", k, err, k.Noun())
			}
		}
		for _, k := range []agentline.Kind{"agents", "users", "agent; DROP TABLE agents", ""} {
			if _, err := db.ProjectOf(ctx, k, 1); err == nil || errors.Is(err, agentline.ErrNotFound) {
				t.Errorf("%q: %v, want refused", k, err)
			}
		}
	})
}
