package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestToolRoutes(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) { testToolRoutes(t, newEnv(t, db)) })
}

func testToolRoutes(t *testing.T, e *env) {
	base := fmt.Sprintf("/api/agents/%d/tools", e.agent.ID)
	valid := func(name string) map[string]any {
		return map[string]any{"name": name, "description": "Look up an order", "url": "https://shop.example.com/hooks/order",
			"parameters": json.RawMessage(orderSchema), "headers": map[string]string{"authorization": "Bearer sk_live_1234567890"}}
	}
	with := func(name string, k string, v any) map[string]any {
		m := valid(name)
		m[k] = v
		return m
	}
	code, body := e.do(t, e.owner, "POST", base, valid("lookup_order"))
	if code != http.StatusCreated {
		t.Fatalf("create = %d %s", code, body)
	}
	var created toolView
	json.Unmarshal(body, &created)
	if created.Method != "POST" || created.TimeoutMS != 10000 || created.Headers["Authorization"] != "Be…" || strings.Contains(string(body), "sk_live") {
		t.Fatalf("created = %s", body)
	}

	tests := []struct {
		name   string
		token  string
		method string
		path   string
		body   any
		status int
		field  string
	}{
		{"duplicate name", e.owner, "POST", base, valid("lookup_order"), 409, ""},
		{"bad name", e.owner, "POST", base, valid("look up"), 400, "name"},
		{"long name", e.owner, "POST", base, valid(strings.Repeat("a", 65)), 400, "name"},
		{"reserved name", e.owner, "POST", base, valid(SearchToolName), 400, "name"},
		{"schema not an object type", e.owner, "POST", base, with("t1", "parameters", json.RawMessage(`{"type":"string"}`)), 400, "parameters"},
		{"schema not compiling", e.owner, "POST", base, with("t2", "parameters", json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`)), 400, "parameters"},
		{"schema reading a file", e.owner, "POST", base, with("t3", "parameters", json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)), 400, "parameters"},
		{"schema as array", e.owner, "POST", base, with("t4", "parameters", json.RawMessage(`[1]`)), 400, "parameters"},
		{"ftp url", e.owner, "POST", base, with("t5", "url", "ftp://example.com/x"), 400, "url"},
		{"no url", e.owner, "POST", base, with("t6", "url", ""), 400, "url"},
		{"url with password", e.owner, "POST", base, with("t7", "url", "https://u:p@example.com/"), 400, "url"},
		{"loopback url", e.owner, "POST", base, with("t21", "url", "http://127.0.0.1:8080/hook"), 400, "url"},
		{"metadata url", e.owner, "PATCH", fmt.Sprintf("/api/tools/%d", created.ID), map[string]any{"url": "http://[::ffff:169.254.169.254]/"}, 400, "url"},
		{"PUT method", e.owner, "POST", base, with("t8", "method", "PUT"), 400, "method"},
		{"timeout too long", e.owner, "POST", base, with("t9", "timeout_ms", 30001), 400, "timeout_ms"},
		{"negative timeout", e.owner, "POST", base, with("t10", "timeout_ms", -1), 400, "timeout_ms"},
		{"Host header", e.owner, "POST", base, with("t11", "headers", map[string]string{"Host": "x"}), 400, "headers"},
		{"header value with newline", e.owner, "POST", base, with("t12", "headers", map[string]string{"X-Key": "a\r\nEvil: 1"}), 400, "headers"},
		{"bad header name", e.owner, "POST", base, with("t13", "headers", map[string]string{"X Key": "a"}), 400, "headers"},
		{"unknown field", e.owner, "POST", base, with("t14", "secret", true), 400, "secret"},
		{"wrong type", e.owner, "POST", base, with("t15", "timeout_ms", "fast"), 400, "timeout_ms"},
		{"malformed JSON", e.owner, "POST", base, `{"name":`, 400, ""},
		{"no token", "", "POST", base, valid("t16"), 401, ""},
		{"viewer cannot create", e.viewer, "POST", base, valid("t17"), 403, ""},
		{"bad agent id", e.owner, "POST", "/api/agents/abc/tools", valid("t18"), 404, ""},
		{"missing agent", e.owner, "POST", "/api/agents/999999/tools", valid("t19"), 404, ""},
		{"other project's agent", e.owner, "POST", fmt.Sprintf("/api/agents/%d/tools", e.otherAgent.ID), valid("t20"), 404, ""},
		{"viewer reads", e.viewer, "GET", fmt.Sprintf("/api/tools/%d", created.ID), nil, 200, ""},
		{"viewer cannot update", e.viewer, "PATCH", fmt.Sprintf("/api/tools/%d", created.ID), map[string]any{"description": "x"}, 403, ""},
		{"viewer cannot delete", e.viewer, "DELETE", fmt.Sprintf("/api/tools/%d", created.ID), nil, 403, ""},
		{"bad tool id", e.owner, "GET", "/api/tools/0", nil, 404, ""},
		{"patch invalid", e.owner, "PATCH", fmt.Sprintf("/api/tools/%d", created.ID), map[string]any{"method": "DELETE"}, 400, "method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := e.do(t, tt.token, tt.method, tt.path, tt.body)
			if code != tt.status {
				t.Fatalf("status = %d, want %d: %s", code, tt.status, body)
			}
			if tt.status < 400 {
				return
			}
			var eb struct {
				Error struct{ Code, Message, Field string }
			}
			if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Message == "" {
				t.Fatalf("error body = %s", body)
			}
			if eb.Error.Field != tt.field {
				t.Fatalf("field = %q, want %q (%s)", eb.Error.Field, tt.field, eb.Error.Message)
			}
		})
	}

	// The headers come back masked, and sending the masked form keeps the
	// stored value while a new value replaces it.
	toolPath := fmt.Sprintf("/api/tools/%d", created.ID)
	code, body = e.do(t, e.owner, "PATCH", toolPath, map[string]any{
		"description": "Find an order", "headers": map[string]string{"Authorization": "Be…", "X-Shop": "new-value-12345"}})
	if code != 200 || strings.Contains(string(body), "sk_live") || strings.Contains(string(body), "new-value") {
		t.Fatalf("patch = %d %s", code, body)
	}
	stored, _ := e.db.Tool(context.Background(), e.agent.ProjectID, created.ID)
	if stored.Headers["Authorization"] != "Bearer sk_live_1234567890" || stored.Headers["X-Shop"] != "new-value-12345" || stored.Description != "Find an order" || stored.URL != created.URL {
		t.Fatalf("stored after patch = %+v", stored)
	}
	e.do(t, e.owner, "PATCH", toolPath, map[string]any{"headers": map[string]string{}})
	if stored, _ := e.db.Tool(context.Background(), e.agent.ProjectID, created.ID); len(stored.Headers) != 0 {
		t.Fatalf("headers not replaced: %v", stored.Headers)
	}

	code, body = e.do(t, e.viewer, "GET", base, nil)
	var list []toolView
	if json.Unmarshal(body, &list); code != 200 || len(list) != 1 || list[0].ID != created.ID {
		t.Fatalf("list = %d %s", code, body)
	}

	// Another project's tool: never readable, changeable or deletable.
	theirs := e.addTool(t, e.otherAgent, agentline.WebhookTool{Name: "theirs", URL: "https://example.com", Headers: map[string]string{"X-Key": "their-secret-value"}})
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		code, body := e.do(t, e.owner, m, fmt.Sprintf("/api/tools/%d", theirs.ID), map[string]any{"description": "mine now"})
		if code != 404 || strings.Contains(string(body), "their") {
			t.Fatalf("%s another project's tool = %d %s", m, code, body)
		}
	}
	if code, _ := e.do(t, e.owner, "GET", fmt.Sprintf("/api/agents/%d/tools", e.otherAgent.ID), nil); code != 404 {
		t.Fatalf("list another project's tools = %d", code)
	}

	if code, body := e.do(t, e.owner, "DELETE", toolPath, nil); code != 204 {
		t.Fatalf("delete = %d %s", code, body)
	}
	if code, _ := e.do(t, e.owner, "GET", toolPath, nil); code != 404 {
		t.Fatalf("get deleted = %d", code)
	}
}

// multipartUpload builds a multipart body with a file (and a title when
// given).
func multipartUpload(t *testing.T, filename, contentType, content, title string) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if title != "" {
		w.WriteField("title", title)
	}
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="file"; filename=%q`, filename)}
	if contentType != "" {
		h["Content-Type"] = []string{contentType}
	}
	part, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	part.Write([]byte(content))
	w.Close()
	return &b, w.FormDataContentType()
}

func TestKnowledgeRoutes(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) { testKnowledgeRoutes(t, newEnv(t, db)) })
}

func testKnowledgeRoutes(t *testing.T, e *env) {
	base := fmt.Sprintf("/api/agents/%d/knowledge", e.agent.ID)
	upload := func(token, filename, contentType, content, title string) (int, []byte) {
		body, ct := multipartUpload(t, filename, contentType, content, title)
		req, _ := http.NewRequest("POST", e.srv.URL+base, body)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", ct)
		return e.send(t, req)
	}

	code, body := e.do(t, e.owner, "POST", base, map[string]any{"title": "Returns", "content_type": "text/markdown",
		"content": "# Returns\n\nUnworn shoes can be returned within 30 days.\n\n## Refunds\n\nRefunds reach your card within five business days."})
	var doc agentline.KnowledgeDocument
	if json.Unmarshal(body, &doc); code != 201 || doc.Chunks != 2 || doc.Title != "Returns" || doc.AgentID != e.agent.ID {
		t.Fatalf("JSON upload = %d %s", code, body)
	}
	if code, body := upload(e.owner, "warranty.md", "", "Every kettle carries a two year warranty.", ""); code != 201 || !strings.Contains(string(body), `"title":"warranty"`) {
		t.Fatalf("markdown file = %d %s", code, body)
	}
	html := `<html><head><title>Store hours</title><style>.x{color:red}</style><script>var secret="hidden script"</script></head>
		<body><h1>Opening hours</h1><p>We open at <b>nine</b> in the morning.</p></body></html>`
	code, body = upload(e.owner, "hours.html", "text/html", html, "")
	if code != 201 || !strings.Contains(string(body), `"title":"Store hours"`) {
		t.Fatalf("html file = %d %s", code, body)
	}

	tests := []struct {
		name   string
		status int
		run    func() (int, []byte)
	}{
		{"pdf file", 400, func() (int, []byte) { return upload(e.owner, "manual.pdf", "application/pdf", "%PDF-1.4", "") }},
		{"pdf by type", 400, func() (int, []byte) { return upload(e.owner, "manual", "application/pdf", "%PDF-1.4", "") }},
		{"unknown file type", 400, func() (int, []byte) { return upload(e.owner, "x.exe", "application/octet-stream", "MZ", "") }},
		{"binary content", 400, func() (int, []byte) { return upload(e.owner, "x.txt", "", "\xff\xfe\xfd", "") }},
		{"empty file", 400, func() (int, []byte) { return upload(e.owner, "x.txt", "", "  \n\n ", "") }},
		{"html without text", 400, func() (int, []byte) { return upload(e.owner, "x.html", "", "<script>x</script>", "t") }},
		{"too large", 413, func() (int, []byte) {
			return upload(e.owner, "big.txt", "", strings.Repeat("word ", MaxDocumentBytes/5+10), "")
		}},
		{"no file field", 400, func() (int, []byte) {
			var b bytes.Buffer
			w := multipart.NewWriter(&b)
			w.WriteField("title", "x")
			w.Close()
			req, _ := http.NewRequest("POST", e.srv.URL+base, &b)
			req.Header.Set("Authorization", "Bearer "+e.owner)
			req.Header.Set("Content-Type", w.FormDataContentType())
			return e.send(t, req)
		}},
		{"JSON without title", 400, func() (int, []byte) { return e.do(t, e.owner, "POST", base, map[string]any{"content": "x"}) }},
		{"JSON unknown type", 400, func() (int, []byte) {
			return e.do(t, e.owner, "POST", base, map[string]any{"title": "x", "content": "x", "content_type": "image/png"})
		}},
		{"JSON unknown field", 400, func() (int, []byte) { return e.do(t, e.owner, "POST", base, map[string]any{"title": "x", "body": "x"}) }},
		{"viewer cannot upload", 403, func() (int, []byte) {
			return e.do(t, e.viewer, "POST", base, map[string]any{"title": "x", "content": "x"})
		}},
		{"other project's agent", 404, func() (int, []byte) {
			return e.do(t, e.owner, "POST", fmt.Sprintf("/api/agents/%d/knowledge", e.otherAgent.ID), map[string]any{"title": "x", "content": "x"})
		}},
		{"search without q", 400, func() (int, []byte) { return e.do(t, e.viewer, "GET", base+"/search", nil) }},
		{"search bad limit", 400, func() (int, []byte) { return e.do(t, e.viewer, "GET", base+"/search?q=x&limit=0", nil) }},
		{"search long q", 400, func() (int, []byte) {
			return e.do(t, e.viewer, "GET", base+"/search?q="+strings.Repeat("a", 1001), nil)
		}},
		{"search other project", 404, func() (int, []byte) {
			return e.do(t, e.owner, "GET", fmt.Sprintf("/api/agents/%d/knowledge/search?q=x", e.otherAgent.ID), nil)
		}},
		{"list other project", 404, func() (int, []byte) {
			return e.do(t, e.owner, "GET", fmt.Sprintf("/api/agents/%d/knowledge", e.otherAgent.ID), nil)
		}},
		{"viewer cannot delete", 403, func() (int, []byte) {
			return e.do(t, e.viewer, "DELETE", fmt.Sprintf("/api/knowledge/%d", doc.ID), nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := tt.run()
			if code != tt.status || !strings.Contains(string(body), `"message"`) {
				t.Fatalf("status = %d, want %d: %s", code, tt.status, body)
			}
		})
	}

	code, body = e.do(t, e.viewer, "GET", base+"/search?q="+"when+will+my+refund+arrive%3F", nil)
	var found struct {
		Query   string
		Results []agentline.Passage
	}
	if json.Unmarshal(body, &found); code != 200 || len(found.Results) == 0 || found.Results[0].DocumentID != doc.ID || !strings.Contains(found.Results[0].Text, "five business days") {
		t.Fatalf("search = %d %s", code, body)
	}
	code, body = e.do(t, e.viewer, "GET", base+"/search?q=opening+hours+morning", nil)
	if code != 200 || !strings.Contains(string(body), "nine in the morning") || strings.Contains(string(body), "hidden script") || strings.Contains(string(body), "color") {
		t.Fatalf("html search = %d %s", code, body)
	}
	code, body = e.do(t, e.viewer, "GET", base, nil)
	var docs []agentline.KnowledgeDocument
	if json.Unmarshal(body, &docs); code != 200 || len(docs) != 3 {
		t.Fatalf("list = %d %s", code, body)
	}

	// The model sees search_knowledge_base now, and it answers.
	defs, err := e.facility.Definitions(context.Background(), e.agent)
	if err != nil || len(defs) != 1 || defs[0].Name != SearchToolName {
		t.Fatalf("definitions = %+v %v", defs, err)
	}
	res, err := e.facility.Execute(context.Background(), e.agent, agentline.ToolCall{CallID: "c", Name: SearchToolName, Arguments: json.RawMessage(`{"query":"how long until the refund is on my card"}`)})
	if err != nil || res.IsError || !strings.Contains(res.Output, "five business days") || !strings.Contains(res.Output, `"source":"Returns"`) {
		t.Fatalf("search tool = %+v %v", res, err)
	}
	res, _ = e.facility.Execute(context.Background(), e.agent, agentline.ToolCall{Name: SearchToolName, Arguments: json.RawMessage(`{"q":"x"}`)})
	if errorCode(t, res) != "invalid_arguments" {
		t.Fatalf("search with bad arguments = %s", res.Output)
	}

	// Another project's document cannot be deleted; the own one can.
	theirs, err := e.db.CreateKnowledgeDocument(context.Background(), agentline.KnowledgeDocument{ProjectID: e.otherAgent.ProjectID, AgentID: e.otherAgent.ID, Title: "t", ContentType: typeText}, "en", []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := e.do(t, e.owner, "DELETE", fmt.Sprintf("/api/knowledge/%d", theirs.ID), nil); code != 404 {
		t.Fatalf("delete another project's document = %d", code)
	}
	for _, d := range docs {
		if code, body := e.do(t, e.owner, "DELETE", fmt.Sprintf("/api/knowledge/%d", d.ID), nil); code != 204 {
			t.Fatalf("delete = %d %s", code, body)
		}
	}
	if defs, _ := e.facility.Definitions(context.Background(), e.agent); len(defs) != 0 {
		t.Fatalf("definitions after deleting every document = %+v", defs)
	}
}
