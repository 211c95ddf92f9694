package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"unicode"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// twoAgents makes two projects with one agent each.
func twoAgents(t *testing.T, db *store.DB) (a1, a2 agentline.Agent) {
	t.Helper()
	ctx := context.Background()
	u := mustUser(t, db, "owner@example.com")
	p1, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
	p2, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
	var err error
	if a1, err = db.CreateAgent(ctx, agentline.Agent{ProjectID: p1.ID, Name: "a1", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI, Language: "en"}); err != nil {
		t.Fatal(err)
	}
	if a2, err = db.CreateAgent(ctx, agentline.Agent{ProjectID: p2.ID, Name: "a2", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI, Language: "en"}); err != nil {
		t.Fatal(err)
	}
	return a1, a2
}

func TestToolsAreScopedToTheirProject(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a1, a2 := twoAgents(t, db)
		tool := agentline.WebhookTool{ProjectID: a1.ProjectID, AgentID: a1.ID, Name: "lookup_order", Description: "Find an order",
			Parameters: json.RawMessage(`{"type":"object"}`), URL: "https://example.com/hook", Method: "POST",
			Headers: map[string]string{"Authorization": "Bearer secret"}, TimeoutMS: 5000}
		tool, err := db.CreateTool(ctx, tool)
		if err != nil || tool.ID == 0 {
			t.Fatalf("CreateTool = %+v %v", tool, err)
		}
		dup := tool
		if _, err := db.CreateTool(ctx, dup); code(err) != agentline.EConflict {
			t.Fatalf("duplicate name: %v", err)
		}
		// The same name on another agent is fine.
		other := tool
		other.ProjectID, other.AgentID = a2.ProjectID, a2.ID
		if _, err := db.CreateTool(ctx, other); err != nil {
			t.Fatalf("same name, other agent: %v", err)
		}
		// An agent of another project cannot be given a tool through p1.
		stray := tool
		stray.AgentID = a2.ID
		if _, err := db.CreateTool(ctx, stray); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("tool for another project's agent: %v", err)
		}

		got, err := db.ToolByName(ctx, a1.ProjectID, a1.ID, "lookup_order")
		if err != nil || got.ID != tool.ID || got.Headers["Authorization"] != "Bearer secret" || string(got.Parameters) != `{"type":"object"}` || got.TimeoutMS != 5000 {
			t.Fatalf("ToolByName = %+v %v", got, err)
		}
		if pid, err := db.ProjectOf(ctx, agentline.KindTool, tool.ID); err != nil || pid != a1.ProjectID {
			t.Fatalf("ProjectOf = %d %v", pid, err)
		}
		// Cross-tenant probes.
		if _, err := db.Tool(ctx, a2.ProjectID, tool.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("read across projects: %v", err)
		}
		if _, err := db.ToolByName(ctx, a2.ProjectID, a1.ID, "lookup_order"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("by name across projects: %v", err)
		}
		moved := tool
		moved.ProjectID = a2.ProjectID
		if _, err := db.UpdateTool(ctx, moved); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("update across projects: %v", err)
		}
		if err := db.DeleteTool(ctx, a2.ProjectID, tool.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("delete across projects: %v", err)
		}

		second, _ := db.CreateTool(ctx, agentline.WebhookTool{ProjectID: a1.ProjectID, AgentID: a1.ID, Name: "second",
			Parameters: json.RawMessage(`{"type":"object"}`), URL: "https://example.com", Method: "GET", TimeoutMS: 1000})
		second.Name = "lookup_order"
		if _, err := db.UpdateTool(ctx, second); code(err) != agentline.EConflict {
			t.Fatalf("rename onto a taken name: %v", err)
		}
		tool.Description, tool.Headers = "Find one order", map[string]string{}
		if got, err := db.UpdateTool(ctx, tool); err != nil || got.Description != "Find one order" || len(got.Headers) != 0 {
			t.Fatalf("UpdateTool = %+v %v", got, err)
		}
		if list, err := db.Tools(ctx, a1.ProjectID, a1.ID); err != nil || len(list) != 2 || list[0].ID != tool.ID {
			t.Fatalf("Tools = %+v %v", list, err)
		}
		if err := db.DeleteTool(ctx, a1.ProjectID, tool.ID); err != nil {
			t.Fatal(err)
		}
		// Deleting the agent takes its tools with it.
		db.DeleteAgent(ctx, a1.ProjectID, a1.ID)
		if _, err := db.ProjectOf(ctx, agentline.KindTool, second.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("tool outlived its agent: %v", err)
		}
	})
}

func TestKnowledgeSearch(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a1, a2 := twoAgents(t, db)
		add := func(a agentline.Agent, title string, chunks ...string) agentline.KnowledgeDocument {
			t.Helper()
			d, err := db.CreateKnowledgeDocument(ctx, agentline.KnowledgeDocument{ProjectID: a.ProjectID, AgentID: a.ID, Title: title, ContentType: "text/plain", Bytes: 10}, a.Language, chunks)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		if has, err := db.HasKnowledge(ctx, a1.ProjectID, a1.ID); err != nil || has {
			t.Fatalf("HasKnowledge before = %v %v", has, err)
		}
		returns := add(a1, "Returns policy", "You can return unworn shoes within 30 days for a full refund.", "Refunds reach your card in five business days.")
		add(a1, "Shipping", "We ship to every country in the European Union. Delivery takes three days.")
		add(a2, "Returns policy", "Other tenant: returns are never accepted.")
		if has, _ := db.HasKnowledge(ctx, a1.ProjectID, a1.ID); !has {
			t.Fatal("HasKnowledge after upload = false")
		}
		if returns.Chunks != 2 || returns.ID == 0 {
			t.Fatalf("document = %+v", returns)
		}
		tests := []struct {
			query, want string
		}{
			{"how do I return my shoes?", "Returns policy"},
			{"when will the refunded money arrive", "Returns policy"}, // stemming: refunded -> refund
			{"do you deliver to Europe? shipping countries", "Shipping"},
		}
		for _, tt := range tests {
			got, err := db.SearchKnowledge(ctx, a1.ProjectID, a1.ID, "en-US", tt.query, 3)
			if err != nil {
				t.Fatalf("%q: %v", tt.query, err)
			}
			if len(got) == 0 || got[0].Title != tt.want {
				t.Fatalf("%q: got %+v, want %s first", tt.query, got, tt.want)
			}
			for _, p := range got {
				if p.Text == "Other tenant: returns are never accepted." {
					t.Fatalf("%q found another agent's passage", tt.query)
				}
			}
		}
		// Query syntax never reaches the engine; nonsense finds nothing.
		for _, q := range []string{`"unbalanced`, `title:x AND (`, `NEAR(a b)`, `a & | ! b`, "zzzqqq", "   ", "the of and"} {
			if _, err := db.SearchKnowledge(ctx, a1.ProjectID, a1.ID, "en", q, 3); err != nil {
				t.Fatalf("%q: %v", q, err)
			}
		}
		// Another project's scope sees nothing of a1's documents.
		if got, _ := db.SearchKnowledge(ctx, a2.ProjectID, a1.ID, "en", "return shoes", 3); len(got) != 0 {
			t.Fatalf("search across projects = %+v", got)
		}
		if err := db.DeleteKnowledgeDocument(ctx, a2.ProjectID, returns.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("delete across projects: %v", err)
		}
		if err := db.DeleteKnowledgeDocument(ctx, a1.ProjectID, returns.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.SearchKnowledge(ctx, a1.ProjectID, a1.ID, "en", "return shoes refund", 3); len(got) != 0 {
			t.Fatalf("deleted document still found: %+v", got)
		}
		if list, _ := db.KnowledgeDocuments(ctx, a1.ProjectID, a1.ID); len(list) != 1 || list[0].Title != "Shipping" {
			t.Fatalf("documents = %+v", list)
		}
		// Deleting the agent removes its chunks from the index too.
		db.DeleteAgent(ctx, a1.ProjectID, a1.ID)
		if got, _ := db.SearchKnowledge(ctx, a1.ProjectID, a1.ID, "en", "shipping", 3); len(got) != 0 {
			t.Fatalf("chunks outlived their agent: %+v", got)
		}
		if n := db.CountKnowledgeIndexRows(ctx, t); n != 1 {
			t.Fatalf("index rows after deletes = %d, want 1 (the other agent's)", n)
		}
	})
}

func TestQueryTermsAndConfigs(t *testing.T) {
	tests := []struct {
		lang, query string
		want        []string
	}{
		{"en", "How do I return my shoes?", []string{"return", "shoes"}},
		{"en-GB", "the THE of", nil},
		{"de", "Wie kann ich die Schuhe zurückgeben", []string{"wie", "kann", "ich", "die", "schuhe", "zurückgeben"}},
		{"en", `title:x OR "y" -z*`, []string{"title", "x", "y", "z"}},
	}
	for _, tt := range tests {
		got := store.QueryTerms(tt.lang, tt.query)
		if len(got) != len(tt.want) {
			t.Fatalf("QueryTerms(%q, %q) = %q, want %q", tt.lang, tt.query, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Fatalf("QueryTerms(%q, %q) = %q, want %q", tt.lang, tt.query, got, tt.want)
			}
		}
	}
	for lang, want := range map[string]string{"en-US": "english", "de": "german", "fr-CA": "french", "ja": "simple", "": "simple"} {
		if got := store.TextSearchConfig(lang); got != want {
			t.Errorf("TextSearchConfig(%q) = %q, want %q", lang, got, want)
		}
	}
}

// FuzzQueryTerms: whatever a caller types, the terms hold only lower-case
// letters and digits, so no full-text query syntax reaches either database.
func FuzzQueryTerms(f *testing.F) {
	for _, s := range []string{`"a" OR b*`, "NEAR(x y)", "a & !b | c:*", "ÄÖÜ straße", "\x00\xff"} {
		f.Add("en", s)
	}
	f.Fuzz(func(t *testing.T, lang, q string) {
		terms := store.QueryTerms(lang, q)
		if len(terms) > 32 {
			t.Fatalf("%d terms", len(terms))
		}
		for _, term := range terms {
			if term == "" {
				t.Fatal("empty term")
			}
			for _, r := range term {
				if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
					t.Fatalf("term %q of %q holds %q", term, q, r)
				}
			}
		}
	})
}
