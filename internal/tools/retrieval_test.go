package tools

import (
	"context"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// loadHelpCenter uploads the corpus for the agent the way the API does and
// returns the document ids by title.
func loadHelpCenter(t *testing.T, db *store.DB, agent agentline.Agent) map[string]int64 {
	t.Helper()
	ids := map[string]int64{}
	for _, d := range helpCenter {
		doc, chunks, err := prepareDocument(d.title, "", typeMarkdown, d.body)
		if err != nil {
			t.Fatal(err)
		}
		doc.ProjectID, doc.AgentID = agent.ProjectID, agent.ID
		if doc, err = db.CreateKnowledgeDocument(context.Background(), doc, agent.Language, chunks); err != nil {
			t.Fatal(err)
		}
		ids[d.title] = doc.ID
	}
	return ids
}

// TestRetrievalRecall measures recall@3: how often the article that answers
// a customer's question is among the first three passages found.
func TestRetrievalRecall(t *testing.T) {
	if len(helpCenter) < 30 || len(helpCenterQuestions) < 30 {
		t.Fatalf("corpus too small: %d documents, %d questions", len(helpCenter), len(helpCenterQuestions))
	}
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ids := loadHelpCenter(t, db, e.agent)
		hits := 0
		for _, q := range helpCenterQuestions {
			want, ok := ids[q.title]
			if !ok {
				t.Fatalf("question %q expects unknown document %q", q.question, q.title)
			}
			got, err := db.SearchKnowledge(context.Background(), e.agent.ProjectID, e.agent.ID, e.agent.Language, q.question, 3)
			if err != nil {
				t.Fatal(err)
			}
			hit := false
			var titles []string
			for _, p := range got {
				hit = hit || p.DocumentID == want
				titles = append(titles, p.Title)
			}
			if hit {
				hits++
			} else {
				t.Logf("miss: %q wants %q, got %q", q.question, q.title, titles)
			}
		}
		recall := float64(hits) / float64(len(helpCenterQuestions))
		t.Logf("%s: recall@3 = %.3f (%d of %d questions, %d documents)", db.Dialect(), recall, hits, len(helpCenterQuestions), len(helpCenter))
		if recall < 0.9 {
			t.Fatalf("recall@3 = %.3f, want at least 0.9", recall)
		}
	})
}
