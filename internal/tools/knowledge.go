package tools

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Limits of the knowledge base.
const (
	// MaxDocumentBytes is the largest document text accepted. The request
	// body limit (AGENTLINE_MAX_BODY_BYTES) applies as well.
	MaxDocumentBytes = 1 << 20
	maxTitle         = 200
	maxSearchQuery   = 1000
	maxSearchLimit   = 20
)

// Content types a document may have.
const (
	typeText     = "text/plain"
	typeMarkdown = "text/markdown"
	typeHTML     = "text/html"
	typePDF      = "application/pdf"
)

var errPDF = agentline.Invalid("file", "PDF is not supported: no well-kept pure-Go PDF text extractor is used; upload the text as .txt, .md or .html")

// normalizeContentType maps what a client may send to one of the accepted
// types, or explains what is accepted.
func normalizeContentType(field, ct string) (string, error) {
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" {
		return typeText, nil
	}
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(ct))
	}
	switch mt {
	case typeText:
		return typeText, nil
	case typeMarkdown, "text/x-markdown":
		return typeMarkdown, nil
	case typeHTML, "application/xhtml+xml":
		return typeHTML, nil
	case typePDF:
		return "", errPDF
	}
	return "", agentline.Invalid(field, "content type %q is not supported: use text/plain, text/markdown or text/html", ct)
}

// typeByExtension is the content type a file name says, or "".
func typeByExtension(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".txt", ".text":
		return typeText
	case ".md", ".markdown":
		return typeMarkdown
	case ".html", ".htm":
		return typeHTML
	case ".pdf":
		return typePDF
	}
	return ""
}

// prepareDocument checks an upload and turns it into the document record and
// its chunks. The title is the one given, else an HTML document's <title>,
// else fallbackTitle.
func prepareDocument(title, fallbackTitle, contentType, content string) (agentline.KnowledgeDocument, []string, error) {
	var doc agentline.KnowledgeDocument
	if len(content) > MaxDocumentBytes {
		return doc, nil, agentline.Errorf(agentline.ETooLarge, "the document is larger than %d bytes", MaxDocumentBytes)
	}
	if !utf8.ValidString(content) {
		return doc, nil, agentline.Invalid("content", "content must be UTF-8 text")
	}
	text := strings.ReplaceAll(content, "\x00", "")
	if contentType == typeHTML {
		var htmlTitle string
		text, htmlTitle = HTMLToText(text)
		if strings.TrimSpace(title) == "" {
			title = htmlTitle
		}
	}
	if strings.TrimSpace(title) == "" {
		title = fallbackTitle
	}
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		return doc, nil, agentline.Invalid("title", "title is required")
	}
	if utf8.RuneCountInString(title) > maxTitle {
		return doc, nil, agentline.Invalid("title", "title is longer than %d characters", maxTitle)
	}
	chunks := Chunk(text)
	if len(chunks) == 0 {
		return doc, nil, agentline.Invalid("content", "the document holds no text")
	}
	doc = agentline.KnowledgeDocument{Title: title, ContentType: contentType, Bytes: len(text)}
	return doc, chunks, nil
}

// knowledgeInput is the JSON form of an upload.
type knowledgeInput struct {
	Title       string `json:"title"`
	Content     string `json:"content"`
	ContentType string `json:"content_type"`
	// fileTitle is an uploaded file's name without extension, the title of
	// last resort.
	fileTitle string
}

// readUpload reads a JSON or multipart upload into title, content type and
// content.
func readUpload(r *http.Request) (knowledgeInput, error) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		var in knowledgeInput
		if err := httpx.Decode(r, &in); err != nil {
			return in, err
		}
		ct, err := normalizeContentType("content_type", in.ContentType)
		in.ContentType = ct
		return in, err
	}
	var in knowledgeInput
	mr := multipart.NewReader(r.Body, params["boundary"])
	var haveFile bool
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var maxErr *http.MaxBytesError
			if errors.As(err, &maxErr) {
				return in, err
			}
			return in, agentline.Invalid("", "malformed multipart body: %v", err)
		}
		switch part.FormName() {
		case "title":
			b, err := readLimited(part, 4*maxTitle)
			if err != nil {
				return in, err
			}
			in.Title = string(b)
		case "file":
			if haveFile {
				return in, agentline.Invalid("file", "send one file per upload")
			}
			haveFile = true
			ct := typeByExtension(part.FileName())
			if ct == "" {
				if ct, err = normalizeContentType("file", part.Header.Get("Content-Type")); err != nil {
					return in, err
				}
			}
			if ct == typePDF {
				return in, errPDF
			}
			b, err := readLimited(part, MaxDocumentBytes)
			if err != nil {
				return in, err
			}
			in.ContentType, in.Content = ct, string(b)
			in.fileTitle = strings.TrimSuffix(path.Base(part.FileName()), path.Ext(part.FileName()))
		default:
			return in, agentline.Invalid(part.FormName(), "unknown form field %q: send file and, optionally, title", part.FormName())
		}
	}
	if !haveFile {
		return in, agentline.Invalid("file", "the multipart upload has no file field")
	}
	return in, nil
}

// readLimited reads all of r, or fails with too_large past max bytes.
func readLimited(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, agentline.Errorf(agentline.ETooLarge, "the upload is larger than %d bytes", max)
	}
	return b, nil
}

func (h *Handler) listKnowledge(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermView)
	if err != nil {
		return err
	}
	list, err := h.store.KnowledgeDocuments(r.Context(), projectID, agentID)
	if err != nil {
		return err
	}
	return listing.WriteWhole(w, r, list, func(d agentline.KnowledgeDocument) listing.Cursor { return listing.After(d.ID) })
}

func (h *Handler) uploadKnowledge(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermCreate)
	if err != nil {
		return err
	}
	in, err := readUpload(r)
	if err != nil {
		return err
	}
	doc, chunks, err := prepareDocument(in.Title, in.fileTitle, in.ContentType, in.Content)
	if err != nil {
		return err
	}
	agent, err := h.store.Agent(r.Context(), projectID, agentID)
	if err != nil {
		return err
	}
	doc.ProjectID, doc.AgentID = projectID, agentID
	if doc, err = h.store.CreateKnowledgeDocument(r.Context(), doc, agent.Language, chunks); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusCreated, doc)
	return nil
}

func (h *Handler) searchKnowledge(w http.ResponseWriter, r *http.Request) error {
	agentID, projectID, err := h.auth.AuthorizePath(r, "agent_id", agentline.KindAgent, agentline.PermView)
	if err != nil {
		return err
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" {
		return agentline.Invalid("q", "q is required: the words to search for")
	}
	if len(q) > maxSearchQuery {
		return agentline.Invalid("q", "q is longer than %d characters", maxSearchQuery)
	}
	limit := searchResults
	if s := r.URL.Query().Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxSearchLimit {
			return agentline.Invalid("limit", "limit must be a whole number from 1 to %d", maxSearchLimit)
		}
	}
	agent, err := h.store.Agent(r.Context(), projectID, agentID)
	if err != nil {
		return err
	}
	results, err := h.store.SearchKnowledge(r.Context(), projectID, agentID, agent.Language, q, limit)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Query   string              `json:"query"`
		Results []agentline.Passage `json:"results"`
	}{q, results})
	return nil
}

func (h *Handler) deleteKnowledge(w http.ResponseWriter, r *http.Request) error {
	return h.auth.DeletePath(w, r, "document_id", agentline.KindKnowledgeDocument, h.store.DeleteKnowledgeDocument)
}
