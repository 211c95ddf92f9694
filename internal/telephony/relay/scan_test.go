package relay

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestField(t *testing.T) {
	msg := []byte(` { "event_id":"e1", "session":{"type":"realtime","x":[1,{"type":"no"}]}, "n": 12, "esc":"a\"b",
		"type" : "response.output_audio.delta", "delta":"AAEC/w==", "last":true }`)
	for _, c := range []struct{ key, want string }{
		{"type", "response.output_audio.delta"},
		{"delta", "AAEC/w=="},
		{"event_id", "e1"},
		{"esc", `a\"b`},
	} {
		if got := stringField(msg, c.key); string(got) != c.want {
			t.Errorf("stringField(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	if v, isStr, ok := field(msg, "n"); !ok || isStr || string(v) != "12" {
		t.Errorf("n = %q %v %v", v, isStr, ok)
	}
	if v, _, ok := field(msg, "last"); !ok || string(v) != "true" {
		t.Errorf("last = %q %v", v, ok)
	}
	if v, _, ok := field(msg, "session"); !ok || string(v) != `{"type":"realtime","x":[1,{"type":"no"}]}` {
		t.Errorf("session = %q %v", v, ok)
	}
	if stringField(msg, "missing") != nil {
		t.Error("missing key found")
	}
	for _, bad := range []string{``, `[]`, `{`, `{"a"`, `{"a":`, `{"a":"x`, `{"a":1 "type":"x"}`, `nope`, `{"a":{"b":1}`} {
		if stringField([]byte(bad), "type") != nil {
			t.Errorf("malformed %q gave a value", bad)
		}
	}
}

// FuzzField checks that the scanner never panics and agrees with
// encoding/json on the top-level "type" string of every valid object that
// has exactly one such key.
func FuzzField(f *testing.F) {
	f.Add([]byte(`{"type":"a","b":{"type":"c"}}`))
	f.Add([]byte(`{"event":"media","media":{"payload":"AAA="}}`))
	f.Add([]byte(`{"b":[1,2,{"x":"]"}],"type":"t\u0041"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, isStr, ok := field(b, "type")
		var want struct{ Type *string }
		if json.Unmarshal(b, &want) != nil || want.Type == nil || topLevelKeys(b, "type") != 1 {
			return
		}
		var unescaped string
		if !ok || !isStr || json.Unmarshal(append(append([]byte{'"'}, got...), '"'), &unescaped) != nil || unescaped != *want.Type {
			t.Fatalf("field(type) = %q %v %v, encoding/json says %q", got, isStr, ok, *want.Type)
		}
	})
}

// topLevelKeys counts the top-level keys equal to key (case-sensitively).
func topLevelKeys(b []byte, key string) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		if k, _ := tok.(string); k == key {
			n++
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return 0
		}
	}
	return n
}
