package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

const testDoc = `
components:
  schemas:
    Id: {type: integer, minimum: 1}
    Input:
      type: object
      additionalProperties: false
      description: what a thing takes
      properties:
        name: {type: string}
        owner: {$ref: '#/components/schemas/Id', description: who owns it}
paths:
  /things/{thing_id}:
    parameters:
      - {name: thing_id, in: path, required: true, schema: {$ref: '#/components/schemas/Id'}}
    patch:
      parameters:
        - {name: dry_run, in: query, schema: {type: boolean}, description: 'check, do not save'}
      requestBody:
        content:
          application/json:
            schema:
              allOf:
                - {$ref: '#/components/schemas/Input'}
                - {required: [name]}
  /projects/{project_id}/things:
    parameters:
      - {name: project_id, in: path, required: true, schema: {type: integer}}
    get: {}
  /bad:
    get:
      parameters:
        - {$ref: '#/components/parameters/Nothing'}
  /clash/{name}:
    post:
      parameters:
        - {name: name, in: path, required: true, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Input'}
`

// An operation's input schema: references inlined (the keywords beside a
// $ref kept), parameters as properties with their descriptions, path
// parameters required, allOf parts merged, the implicit parameter left
// out; what cannot be described is an error.
func TestOperationSchema(t *testing.T) {
	d, err := parseDoc([]byte(testDoc))
	if err != nil {
		t.Fatal(err)
	}
	op, err := d.operation("PATCH", "/things/{thing_id}")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(op.schema)
	want := `{"additionalProperties":false,"description":"what a thing takes","properties":{` +
		`"dry_run":{"description":"check, do not save","type":"boolean"},` +
		`"name":{"type":"string"},` +
		`"owner":{"description":"who owns it","minimum":1,"type":"integer"},` +
		`"thing_id":{"minimum":1,"type":"integer"}},` +
		`"required":["thing_id","name"],"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	if !op.body || strings.Join(op.pathParams, ",") != "thing_id" || strings.Join(op.queryParams, ",") != "dry_run" {
		t.Errorf("operation %+v", op)
	}
	op, err = d.operation("GET", "/projects/{project_id}/things", "project_id")
	if got, _ := json.Marshal(op.schema); err != nil || string(got) != `{"additionalProperties":false,"properties":{},"type":"object"}` || op.body {
		t.Errorf("implicit project: %s, %v", got, err)
	}
	for _, c := range []struct{ method, path, says string }{
		{"GET", "/nowhere", "has no GET /nowhere"},
		{"DELETE", "/things/{thing_id}", "has no DELETE"},
		{"GET", "/bad", "points at nothing"},
		{"POST", "/clash/{name}", "also a parameter"},
	} {
		if _, err := d.operation(c.method, c.path); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s %s: %v, want %q", c.method, c.path, err, c.says)
		}
	}
	if _, err := parseDoc([]byte("paths: [")); err == nil {
		t.Error("a broken document was taken")
	}
	if _, err := New(Options{OpenAPI: []byte(testDoc)}); err == nil || !strings.Contains(err.Error(), "has no GET /api/projects/{project_id}/agents") {
		t.Errorf("New with a document that lacks the tools' operations: %v", err)
	}
}
