package campaign

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"

	"github.com/agentline/agentline"
)

// ParseContactsJSON reads a contacts upload in JSON: an array of
// {phone_number, timezone?, variables?: {name: value}, consent?: {source,
// at}}. It refuses the whole upload for a body that is not one JSON array
// and when the array holds more than max elements, naming the limit; a
// bad element is a RowError (Line is its 1-based position) and the others
// are kept. Unknown fields are errors, so a misspelt "phone" is not
// silently a contact without a number. The caller bounds the bytes read.
func ParseContactsJSON(r io.Reader, max int) (Upload, error) {
	c, err := newCollector(max)
	if err != nil {
		return Upload{}, err
	}
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return Upload{}, agentline.Errorf(agentline.EInvalid, `the body must be a JSON array of contacts, such as [{"phone_number": "+14155550100"}]`)
	}
	for i := 1; dec.More(); i++ {
		if err := c.count(); err != nil {
			return Upload{}, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Upload{}, agentline.Errorf(agentline.EInvalid, "the body is not valid JSON at contact %d: %v", i, err)
		}
		c.add(jsonRow(raw, i))
	}
	if _, err := dec.Token(); err != nil {
		return Upload{}, agentline.Errorf(agentline.EInvalid, "the body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Upload{}, agentline.Errorf(agentline.EInvalid, "the body must hold one JSON array and nothing after it")
	}
	return c.up, nil
}

// jsonRow reads one element of the array, noting each field of the wrong
// type or unknown.
func jsonRow(raw json.RawMessage, line int) row {
	r := row{line: line}
	var fields map[string]json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &fields) != nil {
		r.problems, r.broken = []string{`the contact must be an object such as {"phone_number": "+14155550100"}`}, true
		return r
	}
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		value := fields[key]
		switch key {
		case "phone_number":
			r.phone = r.stringField(value, "phone_number", `a string such as "+14155550100"`)
		case "timezone":
			r.timezone = r.stringField(value, "timezone", `a string such as "America/New_York"`)
		case "variables":
			r.vars = r.variables(value)
		case "consent":
			r.readConsent(value)
		default:
			r.problems = append(r.problems, "unknown field "+quote(key)+"; a contact has phone_number, timezone, variables and consent")
		}
	}
	return r
}

// stringField returns value as a string; null is the empty string.
func (r *row) stringField(value json.RawMessage, name, want string) string {
	var s string
	if isNull(value) {
		return ""
	}
	if json.Unmarshal(value, &s) != nil {
		r.problems = append(r.problems, name+" must be "+want)
	}
	return s
}

func (r *row) variables(value json.RawMessage) map[string]string {
	var raw map[string]json.RawMessage
	if isNull(value) {
		return nil
	}
	if json.Unmarshal(value, &raw) != nil {
		r.problems = append(r.problems, `variables must be an object of names and text values, such as {"first_name": "Ada"}`)
		return nil
	}
	vars := make(map[string]string, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		var s string
		if isNull(raw[name]) || json.Unmarshal(raw[name], &s) != nil {
			r.problems = append(r.problems, "variable "+quote(name)+" must be a string")
			continue
		}
		vars[name] = s
	}
	return vars
}

func (r *row) readConsent(value json.RawMessage) {
	var raw map[string]json.RawMessage
	if isNull(value) {
		return
	}
	if json.Unmarshal(value, &raw) != nil {
		r.problems = append(r.problems, `consent must be an object such as {"source": "web form", "at": "2024-05-01T12:00:00Z"}`)
		return
	}
	r.hasConsent = true
	for _, key := range slices.Sorted(maps.Keys(raw)) {
		switch key {
		case "source":
			r.consentSource = r.stringField(raw[key], "consent source", "a string")
		case "at":
			r.consentAt = r.stringField(raw[key], "consent at", `an RFC 3339 time such as "2024-05-01T12:00:00Z"`)
		default:
			r.problems = append(r.problems, "unknown consent field "+quote(key)+"; consent has source and at")
		}
	}
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
