package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/agentline/agentline"
)

// KindKnowledgeDocument is the table of agents' knowledge documents.
const KindKnowledgeDocument Kind = "knowledge_documents"

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
				q.WriteString(`INSERT INTO knowledge_chunks (document_id, project_id, agent_id, position, title, body) VALUES `)
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
					q.WriteString(`(?, ?, ?, ?, ?, ?)`)
				}
			}
			if _, err := c.exec(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("store knowledge chunks: %w", err)
			}
		}
		return nil
	})
	return doc, err
}

// KnowledgeDocuments lists the documents of an agent of the project, oldest
// first.
func (db *DB) KnowledgeDocuments(ctx context.Context, projectID, agentID int64) ([]agentline.KnowledgeDocument, error) {
	rows, err := db.reader().query(ctx,
		`SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE project_id = ? AND agent_id = ? ORDER BY id`, projectID, agentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []agentline.KnowledgeDocument{}
	for rows.Next() {
		d, err := scanKnowledgeDocument(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// KnowledgeDocument returns one document of the project.
func (db *DB) KnowledgeDocument(ctx context.Context, projectID, documentID int64) (agentline.KnowledgeDocument, error) {
	d, err := scanKnowledgeDocument(db.reader().queryRow(ctx,
		`SELECT `+knowledgeColumns+` FROM knowledge_documents WHERE project_id = ? AND id = ?`, projectID, documentID))
	return d, notFound(err, "knowledge document")
}

// DeleteKnowledgeDocument deletes a document of the project and its chunks.
func (db *DB) DeleteKnowledgeDocument(ctx context.Context, projectID, documentID int64) error {
	res, err := db.writer().exec(ctx, `DELETE FROM knowledge_documents WHERE project_id = ? AND id = ?`, projectID, documentID)
	return mustAffect(res, err, "knowledge document")
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
		cfg, words := TextSearchConfig(language), strings.Join(terms, " ")
		rows, err = db.reader().query(ctx, postgresSearch,
			cfg, words, projectID, agentID, cfg, strings.Join(terms, " or "), projectID, agentID, limit)
	} else {
		quoted := make([]string, len(terms))
		for i, t := range terms {
			quoted[i] = `"` + t + `"`
		}
		// bm25 is lower-is-better; the title column weighs four times the body.
		rows, err = db.reader().query(ctx,
			`SELECT c.document_id, c.title, c.body, -bm25(knowledge_fts, 4.0, 1.0) AS score
			 FROM knowledge_fts JOIN knowledge_chunks c ON c.id = knowledge_fts.rowid
			 WHERE knowledge_fts MATCH ? AND c.project_id = ? AND c.agent_id = ?
			 ORDER BY bm25(knowledge_fts, 4.0, 1.0), c.id LIMIT ?`,
			strings.Join(quoted, " OR "), projectID, agentID, limit)
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

// postgresSearch ranks chunks with BM25's idea on top of ts_rank_cd, which
// alone has no notion of how rare a word is: each query term's ts_rank_cd
// (title weighs A, body B, divided by 1 + log of the chunk's length) is
// multiplied by the term's inverse document frequency among the agent's
// chunks, and the products are summed. Candidates are the chunks matching
// any term (GIN index); since every chunk holding a term is a candidate,
// counting over candidates gives the exact document frequency.
// websearch_to_tsquery never fails on user text, and the terms hold only
// letters and digits. Parameters: config, terms joined by spaces, project,
// agent, config, terms joined by " or ", project, agent, limit.
const postgresSearch = `
WITH terms AS (
    SELECT t.i, websearch_to_tsquery(?::regconfig, t.w) AS tq
    FROM unnest(string_to_array(?, ' ')) WITH ORDINALITY AS t(w, i)
),
live AS (SELECT i, tq FROM terms WHERE numnode(tq) > 0),
cand AS (
    SELECT c.id, c.document_id, c.title, c.body, c.tsv
    FROM knowledge_chunks c
    WHERE c.project_id = ? AND c.agent_id = ? AND c.tsv @@ websearch_to_tsquery(?::regconfig, ?)
),
df AS (
    SELECT live.i, count(*) AS n FROM live JOIN cand ON cand.tsv @@ live.tq GROUP BY live.i
),
total AS (SELECT count(*) AS n FROM knowledge_chunks WHERE project_id = ? AND agent_id = ?)
SELECT cand.document_id, cand.title, cand.body,
       sum(ln(1 + (total.n - df.n + 0.5) / (df.n + 0.5))::float8
           * ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', cand.tsv, live.tq, 1)) AS score
FROM cand
JOIN live ON cand.tsv @@ live.tq
JOIN df ON df.i = live.i
CROSS JOIN total
GROUP BY cand.id, cand.document_id, cand.title, cand.body
ORDER BY score DESC, cand.id
LIMIT ?`

// maxQueryTerms bounds the work one search can ask for.
const maxQueryTerms = 32

// QueryTerms splits a plain-language query into the lower-case words worth
// searching for: letters and digits only (so no query syntax gets through),
// without duplicates and, for English, without stop words. A query of stop
// words only keeps them.
func QueryTerms(language, query string) []string {
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	english := baseLanguage(language) == "en"
	seen := map[string]bool{}
	var out, stops []string
	for _, w := range words {
		if seen[w] || w == "or" || w == "and" {
			continue
		}
		seen[w] = true
		if english && englishStopWords[w] {
			stops = append(stops, w)
			continue
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		out = stops
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
