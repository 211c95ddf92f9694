package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentline/agentline"
)

const knowledgeColumns = `id, project_id, agent_id, title, content_type, bytes, chunks, created_at`

func scanKnowledgeDocument(row interface{ Scan(...any) error }) (agentline.KnowledgeDocument, error) {
	var d agentline.KnowledgeDocument
	err := row.Scan(&d.ID, &d.ProjectID, &d.AgentID, &d.Title, &d.ContentType, &d.Bytes, &d.Chunks, utc(&d.CreatedAt))
	return d, err
}

// chunkBatch is how many chunks one INSERT writes.
const chunkBatch = 100

// CreateKnowledgeDocument stores doc and its chunks (the passages search
// returns, in order) for doc.AgentID, which must be an agent of
// doc.ProjectID. language is the agent's BCP 47 tag: on PostgreSQL it picks
// the text search configuration the chunks are indexed with.
func (db *DB) CreateKnowledgeDocument(ctx context.Context, doc agentline.KnowledgeDocument, language string, chunks []string) (agentline.KnowledgeDocument, error) {
	doc.CreatedAt = db.now()
	doc.Chunks = len(chunks)
	err := db.tx(ctx, func(c conn) error {
		err := c.queryRow(ctx,
			`INSERT INTO knowledge_documents (project_id, agent_id, title, content_type, bytes, chunks, created_at)
			 SELECT project_id, id, ?, ?, ?, ?, ? FROM agents WHERE project_id = ? AND id = ?
			 RETURNING id`,
			doc.Title, doc.ContentType, doc.Bytes, doc.Chunks, doc.CreatedAt, doc.ProjectID, doc.AgentID).Scan(&doc.ID)
		if errors.Is(err, sql.ErrNoRows) {
			return agentline.NotFound("agent")
		}
		if err != nil {
			return fmt.Errorf("create knowledge document: %w", err)
		}
		cfg := TextSearchConfig(language)
		for start := 0; start < len(chunks); start += chunkBatch {
			batch := chunks[start:min(start+chunkBatch, len(chunks))]
			var q strings.Builder
			args := make([]any, 0, len(batch)*7)
			if db.dialect == Postgres {
				q.WriteString(`INSERT INTO knowledge_chunks (document_id, project_id, agent_id, position, title, body, language) VALUES `)
			} else {
				q.WriteString(`INSERT INTO knowledge_chunks (document_id, project_id, agent_id, position, title, body, scope) VALUES `)
			}
			for i, body := range batch {
				if i > 0 {
					q.WriteString(", ")
				}
				args = append(args, doc.ID, doc.ProjectID, doc.AgentID, start+i, doc.Title, body)
				if db.dialect == Postgres {
					q.WriteString(`(?, ?, ?, ?, ?, ?, ?::regconfig)`)
					args = append(args, cfg)
				} else {
					q.WriteString(`(?, ?, ?, ?, ?, ?, ?)`)
					args = append(args, sqliteScope(doc.AgentID))
				}
			}
			if _, err := c.exec(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("store knowledge chunks: %w", err)
			}
		}
		return c.audit(ctx, change(doc.ProjectID, "document.create", "document", doc.ID, agentline.AuditChanges(nil, doc)))
	})
	return doc, err
}

// KnowledgeDocuments lists the documents of an agent of the project, oldest
// first.
func (db *DB) KnowledgeDocuments(ctx context.Context, projectID, agentID int64) ([]agentline.KnowledgeDocument, error) {
	return queryAll(ctx, db.reader(), scanKnowledgeDocument,
		`SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE project_id = ? AND agent_id = ? ORDER BY id`, projectID, agentID)
}

// DeleteKnowledgeDocument deletes a document of the project and its chunks.
func (db *DB) DeleteKnowledgeDocument(ctx context.Context, projectID, documentID int64) error {
	return db.deleteOwned(ctx, agentline.KindKnowledgeDocument, projectID, documentID, "knowledge document")
}

// HasKnowledge reports whether the agent of the project has any document.
func (db *DB) HasKnowledge(ctx context.Context, projectID, agentID int64) (bool, error) {
	var one int
	err := db.reader().queryRow(ctx,
		`SELECT 1 FROM knowledge_documents WHERE project_id = ? AND agent_id = ? LIMIT 1`, projectID, agentID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// SearchKnowledge returns up to limit passages of the agent's documents that
// best match query, best first. The query is plain words: each word counts
// (OR, ranked), stop words are dropped, words are stemmed, and a word in a
// document's title weighs more than one in its body. language is the
// agent's BCP 47 tag.
func (db *DB) SearchKnowledge(ctx context.Context, projectID, agentID int64, language, query string, limit int) ([]agentline.Passage, error) {
	terms := QueryTerms(language, query)
	if len(terms) == 0 || limit <= 0 {
		return []agentline.Passage{}, nil
	}
	var rows *sql.Rows
	var err error
	if db.dialect == Postgres {
		rows, err = db.reader().query(ctx, postgresSearch,
			TextSearchConfig(language), strings.Join(terms, " "), projectID, agentID, projectID, agentID, limit)
	} else {
		if terms, err = db.sqliteSelectiveTerms(ctx, agentID, terms); err != nil {
			return nil, err
		}
		quoted := make([]string, len(terms))
		for i, t := range terms {
			quoted[i] = `"` + t + `"`
		}
		// The scope token keeps the match to the agent's chunks inside the
		// index; FTS5 ranks and cuts to the limit itself (ORDER BY rank),
		// and only the winners are read from the content table. bm25 is
		// lower-is-better; the title weighs four times the body.
		rows, err = db.reader().query(ctx,
			`SELECT c.document_id, c.title, c.body, -f.rank
			 FROM (SELECT rowid, rank FROM knowledge_fts
			       WHERE knowledge_fts MATCH ? AND rank MATCH 'bm25(0.0, 4.0, 1.0)'
			       ORDER BY rank LIMIT ?) f
			 JOIN knowledge_chunks c ON c.id = f.rowid
			 WHERE c.project_id = ? AND c.agent_id = ?
			 ORDER BY f.rank, c.id`,
			`scope:"`+sqliteScope(agentID)+`" AND (`+strings.Join(quoted, " OR ")+`)`, limit, projectID, agentID)
	}
	if err != nil {
		return nil, fmt.Errorf("search knowledge: %w", err)
	}
	defer rows.Close()
	out := []agentline.Passage{}
	for rows.Next() {
		var p agentline.Passage
		if err := rows.Scan(&p.DocumentID, &p.Title, &p.Text, &p.Score); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// postgresSearch ranks chunks with Okapi BM25, evaluated the way an
// inverted index does: each query term's matching chunks come from the GIN
// index (so the work grows with how many chunks hold the terms, not with
// the corpus), which also gives the term's document frequency for its IDF.
// Term frequency is taken as one, which short chunks make a fair
// approximation and which saves a ts_rank call per match; a term that is in
// the document's title counts 2.5 times. ts_rank_cd alone was tried first:
// it has no IDF, ranked chunks full of a common word above the one holding
// the rare word that answers, and cost about 10 µs per matching chunk.
// websearch_to_tsquery never fails on user text; the terms hold only
// letters and digits. Parameters: config, terms joined by spaces, project,
// agent, project, agent, limit.
const postgresSearch = `
WITH terms AS MATERIALIZED (
    SELECT t.i, websearch_to_tsquery(?::regconfig, t.w) AS tq
    FROM unnest(string_to_array(?, ' ')) WITH ORDINALITY AS t(w, i)
),
hits AS MATERIALIZED (
    SELECT terms.i, c.id, c.lexemes AS dl, c.title_tsv @@ terms.tq AS in_title
    FROM terms JOIN knowledge_chunks c ON c.tsv @@ terms.tq
    WHERE numnode(terms.tq) > 0 AND c.project_id = ? AND c.agent_id = ?
),
df AS (SELECT i, count(*)::float8 AS n FROM hits GROUP BY i),
total AS (
    SELECT greatest(coalesce(sum(chunks), 0), 1)::float8 AS n
    FROM knowledge_documents WHERE project_id = ? AND agent_id = ?
),
avgdl AS (SELECT greatest(avg(dl), 1)::float8 AS v FROM hits),
top AS (
    SELECT h.id, sum(
               ln(1 + greatest(total.n - df.n + 0.5, 0.5) / (df.n + 0.5))
               * CASE WHEN h.in_title THEN 2.5 ELSE 1 END
               * 2.2 / (1 + 1.2 * (0.25 + 0.75 * h.dl / avgdl.v))
           ) AS score
    FROM hits h JOIN df ON df.i = h.i CROSS JOIN total CROSS JOIN avgdl
    GROUP BY h.id
    ORDER BY score DESC, h.id
    LIMIT ?
)
SELECT c.document_id, c.title, c.body, top.score
FROM top JOIN knowledge_chunks c ON c.id = top.id
ORDER BY top.score DESC, top.id`

// sqliteTermBudget bounds how many index entries (chunks matching a term,
// summed over the terms) a SQLite search ranks, past its rarest term.
const sqliteTermBudget = 2000

// sqliteSelectiveTerms picks the query terms worth ranking on SQLite. FTS5
// computes bm25 for every chunk matching any term, so common words make a
// query read much of the corpus, while they hardly move a BM25 ranking (a
// word in half the chunks has an IDF below ln 2, against 5 to 9 for the
// rare words that tell passages apart). So when the terms together match
// more than sqliteTermBudget chunks, the most common ones are dropped until
// the rest fit; the rarest term always stays. Counting a term's matches
// reads only its list in the index. Small knowledge bases never reach the
// budget.
func (db *DB) sqliteSelectiveTerms(ctx context.Context, agentID int64, terms []string) ([]string, error) {
	if len(terms) < 2 {
		return terms, nil
	}
	var q strings.Builder
	q.WriteString(`SELECT 0`)
	var args []any
	for _, t := range terms {
		q.WriteString(`, (SELECT count(*) FROM knowledge_fts WHERE knowledge_fts MATCH ?)`)
		args = append(args, `scope:"`+sqliteScope(agentID)+`" AND "`+t+`"`)
	}
	counts := make([]int64, len(terms)+1)
	dest := make([]any, len(counts))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := db.reader().queryRow(ctx, q.String(), args...).Scan(dest...); err != nil {
		return nil, fmt.Errorf("search knowledge: term counts: %w", err)
	}
	df := counts[1:]
	var sum int64
	for _, n := range df {
		sum += n
	}
	if sum <= sqliteTermBudget {
		return terms, nil
	}
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(df[a], df[b]) })
	var keep []string
	sum = 0
	for _, i := range order {
		if df[i] == 0 {
			continue
		}
		if len(keep) > 0 && sum+df[i] > sqliteTermBudget {
			break
		}
		keep = append(keep, terms[i])
		sum += df[i]
	}
	return keep, nil
}

// sqliteScope is the token that marks an agent's chunks in the SQLite index.
func sqliteScope(agentID int64) string { return "agent" + strconv.FormatInt(agentID, 10) }

// maxQueryTerms bounds the work one search can ask for.
const maxQueryTerms = 32

// QueryTerms splits a plain-language query into the lower-case words worth
// searching for: letters and digits only (so no query syntax gets through),
// without duplicates and, for English, without stop words. A query of stop
// words only has no terms and finds nothing, as on PostgreSQL, whose
// language configurations drop stop words themselves; ranking every passage
// by "the" and "of" would cost a scan of the whole index for no answer.
func QueryTerms(language, query string) []string {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	english := baseLanguage(language) == "en"
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		if seen[w] || w == "or" || w == "and" || (english && englishStopWords[w]) {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	if len(out) > maxQueryTerms {
		out = out[:maxQueryTerms]
	}
	return out
}

func baseLanguage(tag string) string {
	base, _, _ := strings.Cut(strings.ToLower(tag), "-")
	return base
}

// textSearchConfigs maps languages to the text search configurations
// (stemmer and stop words of the language) that PostgreSQL 15 and later
// ship.
var textSearchConfigs = map[string]string{
	"ar": "arabic", "da": "danish", "de": "german", "el": "greek", "en": "english", "es": "spanish",
	"fi": "finnish", "fr": "french", "ga": "irish", "hu": "hungarian", "id": "indonesian", "it": "italian",
	"lt": "lithuanian", "nb": "norwegian", "ne": "nepali", "nl": "dutch", "nn": "norwegian", "no": "norwegian",
	"pt": "portuguese", "ro": "romanian", "ru": "russian", "sv": "swedish", "ta": "tamil", "tr": "turkish",
	"yi": "yiddish",
}

// TextSearchConfig is the PostgreSQL text search configuration for a BCP 47
// language tag: the language's own where PostgreSQL has one, else simple
// (lower-cased words, no stemming).
func TextSearchConfig(language string) string {
	if c, ok := textSearchConfigs[baseLanguage(language)]; ok {
		return c
	}
	return "simple"
}

// englishStopWords are words too common to tell passages apart. SQLite's
// porter tokenizer keeps them, so queries drop them here.
var englishStopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further
		had has have having he her here hers herself him himself his how i if in into is it its itself just
		me more most my myself no nor not now of off on once only other our ours ourselves out over own same
		she should so some such than that the their theirs them themselves then there these they this those
		through to too under until up very was we were what when where which while who whom why will with
		would you your yours yourself yourselves s t don doesn didn isn aren wasn weren won
		get got please tell know want need let us`) {
		m[w] = true
	}
	return m
}()
