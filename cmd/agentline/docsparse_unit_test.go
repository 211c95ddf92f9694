package main

import (
	"reflect"
	"testing"
)

// TestDocsParsing pins the conventions of the docs harness: which blocks
// run, how commands are cut, and which comments are checks.
func TestDocsParsing(t *testing.T) {
	doc := "intro\n\n<!-- docs-test: skip: needs a carrier -->\n```sh\nmake run\n```\n\n" +
		"```sh\nX=$(curl -s localhost:8080/a \\\n  -d '{\n  \"a\": 1\n}' | jq .id)\n# 201 {\"id\":1,\n#  \"b\":...}\n" +
		"curl -s localhost:8080/b   # 204, gone\njq -n '{}' |\ncurl -s localhost:8080/c -d @-\n# prose 404\n\n# 200 not this one's\n```\n" +
		"```json\n{\"id\":1}\n```\n"
	blocks, skipFile := parseDoc(doc)
	if skipFile != "" || len(blocks) != 2 || blocks[0].Skip != "needs a carrier" || blocks[1].Skip != "" || blocks[1].Shows != `{"id":1}` {
		t.Fatalf("blocks = %+v, skip-file %q", blocks, skipFile)
	}
	cmds, err := splitCommands(blocks[1])
	if err != nil {
		t.Fatal(err)
	}
	var got []expectation
	var lines []int
	for _, c := range cmds {
		got = append(got, c.Expect)
		lines = append(lines, c.Line)
	}
	want := []expectation{{201, "{\"id\":1,\n  \"b\":...}"}, {204, ""}, {0, ""}}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(lines, []int{9, 15, 16}) {
		t.Fatalf("expectations %+v at lines %v, want %+v at 9, 15, 16", got, lines, want)
	}
	if _, err := splitCommands(docBlock{Line: 1, Lines: []string{"curl -d '{"}}); err == nil {
		t.Error("an unclosed quote was taken")
	}
	if _, skip := parseDoc("<!-- docs-test: skip-file: load runs -->\n"); skip != "load runs" {
		t.Errorf("skip-file = %q", skip)
	}
}

func TestDocsAnswers(t *testing.T) {
	for _, c := range []struct {
		pattern, body string
		ok            bool
	}{
		{`{"id": 1, ..., "role": "owner"}`, `{"id":1,"name":"Shop Inc","role":"owner"}` + "\n", true},
		{`{"id": 1, ...}`, `{"id":12}`, false},
		{`{"accepted":4}`, `{"accepted":4,"more":1}`, false},
	} {
		if got := bodyMatches(c.pattern, c.body); got != c.ok {
			t.Errorf("bodyMatches(%s, %s) = %v", c.pattern, c.body, got)
		}
	}
	doc := map[string]any{"a": 1.0, "b": map[string]any{"c": "x"}, "d": "...", "e": nil}
	got := map[string]any{"a": 2.0, "b": map[string]any{"c": "y", "new": true}, "d": []any{}, "e": "z"}
	if diffs := shapeDiff("answer", doc, got); !reflect.DeepEqual(diffs, []string{"answer.b.new: in the answer, not shown in the doc"}) {
		t.Errorf("shapeDiff = %q", diffs)
	}
}
