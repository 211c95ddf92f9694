package tools

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// syntheticCorpus generates documents x chunksPerDoc passages of 120 words
// each, drawn from a 5000-word vocabulary with a Zipf distribution, plus
// queries of 3 to 8 words drawn the same way. As in English, the most
// frequent words are function words (the, of, and ...); the rest are made
// up. The same seed gives the same corpus.
func syntheticCorpus(documents, chunksPerDoc, queries int) (docs [][]string, qs []string) {
	r := rand.New(rand.NewPCG(4, 2))
	syllables := []string{"ka", "lo", "mi", "ren", "sto", "va", "qui", "ber", "dal", "to", "ne", "sha", "pol", "ur", "fen", "gri", "ma", "zo", "tel", "wi"}
	vocab := make([]string, 5000)
	for i := range vocab {
		if i < len(frequentWords) {
			vocab[i] = frequentWords[i]
			continue
		}
		var w strings.Builder
		for range 2 + r.IntN(3) {
			w.WriteString(syllables[r.IntN(len(syllables))])
		}
		vocab[i] = w.String()
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	sentence := func(n int) string {
		words := make([]string, n)
		for i := range words {
			words[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(words, " ")
	}
	for range documents {
		var chunks []string
		for range chunksPerDoc {
			chunks = append(chunks, sentence(120))
		}
		docs = append(docs, chunks)
	}
	for range queries {
		qs = append(qs, sentence(3+r.IntN(6)))
	}
	return docs, qs
}

// BenchmarkKnowledgeSearch times one search_knowledge_base query over an
// agent with 10,000 chunks, on each database, and reports the median and
// 99th percentile latency.
func BenchmarkKnowledgeSearch(b *testing.B) {
	docs, queries := syntheticCorpus(100, 100, 200)
	empty := 0
	for _, q := range queries {
		if len(store.QueryTerms("en", q)) == 0 {
			empty++
		}
	}
	b.Logf("%d of %d queries are stop words only (they find nothing without touching the index)", empty, len(queries))
	for _, d := range storetest.Dialects() {
		db := storetest.Open(b, d)
		ctx := context.Background()
		u, err := db.CreateUser(ctx, "bench@example.com", "x")
		if err != nil {
			b.Fatal(err)
		}
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "bench"}, u.ID)
		agent, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "bench", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI, Language: "en"})
		if err != nil {
			b.Fatal(err)
		}
		for i, chunks := range docs {
			doc := agentline.KnowledgeDocument{ProjectID: p.ID, AgentID: agent.ID, Title: fmt.Sprintf("Document %d", i), ContentType: typeText}
			if _, err := db.CreateKnowledgeDocument(ctx, doc, agent.Language, chunks); err != nil {
				b.Fatal(err)
			}
		}
		if db.Dialect() == store.Postgres {
			if err := db.ExecAdmin(ctx, "ANALYZE"); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(string(d), func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				_, err := db.SearchKnowledge(ctx, p.ID, agent.ID, agent.Language, queries[i%len(queries)], searchResults)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatalf("search %q: %v", queries[i%len(queries)], err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
		})
	}
}

// frequentWords are the most frequent English words, most frequent first.
var frequentWords = strings.Fields(`the of and to a in is you that it he was for on are as with his they i at
	be this have from or one had by word but not what all were we when your can said there use an each which
	she do how their if will up other about out many then them these so some her would make like him into
	time has look two more write go see number no way could people my than first water been call who oil its
	now find long down day did get come made may part`)
