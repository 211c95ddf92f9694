package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// HoneypotField is the hidden input people leave empty and form-filling
// bots do not. Field names start with a letter, so none can take it.
const HoneypotField = "_website"

// maxSubmitBytes bounds a submission's body, well under the server's
// general limit: thirty fields of text fit many times over.
const maxSubmitBytes = 64 << 10

// submission is what a visitor sent: text answers as typed (to show the
// form again with them), checkboxes, the honeypot, and the problems found
// while reading it (a field the form lacks, a value of the wrong type),
// which are reported together with the answers' own.
type submission struct {
	text     map[string]string
	checked  map[string]bool
	honeypot string
	problems fieldErrors
}

// fieldErrors maps a field name to its problem, for the 400 answer and the
// page shown again.
type fieldErrors map[string]string

// err is the invalid_request error carrying every field's problem.
func (fe fieldErrors) err() error {
	names := make([]string, 0, len(fe))
	for n := range fe {
		names = append(names, n)
	}
	sort.Strings(names)
	msgs := make([]string, len(names))
	for i, n := range names {
		msgs[i] = n + ": " + fe[n]
	}
	return &agentline.Error{Code: agentline.EInvalid, Field: names[0], Fields: fe,
		Message: "the form has problems: " + strings.Join(msgs, "; ")}
}

// readSubmission reads a JSON object or a form-encoded body. Body-level
// problems (malformed, too large, another content type) are the error;
// problems with single fields go into the submission's problems.
func readSubmission(w http.ResponseWriter, r *http.Request, form *agentline.FormSettings) (submission, error) {
	sub, fe, err := parseSubmission(w, r, form)
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		err = errTooLarge
	}
	sub.problems = fe
	return sub, err
}

// errTooLarge refuses a body over maxSubmitBytes.
var errTooLarge = &agentline.Error{Code: agentline.ETooLarge, Message: fmt.Sprintf("a form submission is at most %d bytes", maxSubmitBytes)}

func parseSubmission(w http.ResponseWriter, r *http.Request, form *agentline.FormSettings) (submission, fieldErrors, error) {
	sub := submission{text: map[string]string{}, checked: map[string]bool{}}
	fe := fieldErrors{}
	r.Body = http.MaxBytesReader(w, r.Body, maxSubmitBytes)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var raw map[string]json.RawMessage
		if err := httpx.Decode(r, &raw); err != nil {
			return sub, nil, err
		}
		readJSONAnswers(raw, form, &sub, fe)
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			var maxErr *http.MaxBytesError
			if errors.As(err, &maxErr) {
				return sub, nil, err
			}
			return sub, nil, agentline.Invalid("", "the form-encoded body does not parse")
		}
		readFormAnswers(r.PostForm, form, &sub, fe)
	default:
		return sub, nil, agentline.Invalid("", "send the answers as a JSON object or form-encoded (application/x-www-form-urlencoded)")
	}
	return sub, fe, nil
}

// readJSONAnswers reads the answers of a JSON object: a bool per checkbox,
// a string (or null) per other field.
func readJSONAnswers(raw map[string]json.RawMessage, form *agentline.FormSettings, sub *submission, fe fieldErrors) {
	for name, v := range raw {
		if name == HoneypotField {
			if s := string(bytes.TrimSpace(v)); s != `""` && s != "null" {
				sub.honeypot = s
			}
			continue
		}
		fd, ok := form.Field(name)
		if !ok {
			fe[fieldKey(name)] = "this form has no such field"
			continue
		}
		if fd.Type == agentline.FieldCheckbox {
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				fe[name] = "must be true or false"
			}
			sub.checked[name] = b
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil && string(bytes.TrimSpace(v)) != "null" {
			fe[name] = "must be text"
			continue
		}
		sub.text[name] = s
	}
}

// readFormAnswers reads the answers of a form-encoded body as a browser
// posts it: a checkbox is on or absent, each field is sent once.
func readFormAnswers(values url.Values, form *agentline.FormSettings, sub *submission, fe fieldErrors) {
	for name, vs := range values {
		if name == HoneypotField {
			sub.honeypot = strings.Join(vs, "")
			continue
		}
		fd, ok := form.Field(name)
		if !ok {
			fe[fieldKey(name)] = "this form has no such field"
			continue
		}
		if len(vs) != 1 {
			fe[name] = "was sent more than once"
			continue
		}
		if fd.Type == agentline.FieldCheckbox {
			switch strings.ToLower(vs[0]) {
			case "on", "true", "yes", "1":
				sub.checked[name] = true
			case "", "off", "false", "no", "0":
			default:
				fe[name] = "must be on or off"
			}
			continue
		}
		sub.text[name] = vs[0]
	}
}

// fieldKey makes a sent name safe to echo as a key: bounded and printable.
func fieldKey(name string) string {
	if len(name) > 60 {
		name = name[:60]
	}
	return strings.ToValidUTF8(name, "?")
}

var phone = regexp.MustCompile(`^\+?[0-9][0-9 ().\-]{3,28}[0-9]$`)

// check validates the answers against the form's fields and returns them
// as stored: a string per text field (trimmed; "" when left empty), a bool
// per checkbox.
func check(form *agentline.FormSettings, sub submission, fe fieldErrors) map[string]any {
	answers := make(map[string]any, len(form.Fields))
	for _, fd := range form.Fields {
		if fd.Type == agentline.FieldCheckbox {
			answers[fd.Name] = sub.checked[fd.Name]
			if fd.Required && !sub.checked[fd.Name] && fe[fd.Name] == "" {
				fe[fd.Name] = "must be checked"
			}
			continue
		}
		v := strings.TrimSpace(sub.text[fd.Name])
		answers[fd.Name] = v
		if fe[fd.Name] != "" {
			continue
		}
		if msg := problem(fd, v); msg != "" {
			fe[fd.Name] = msg
		}
	}
	return answers
}

// problem is what is wrong with one text answer, or "".
func problem(fd agentline.FormField, v string) string {
	if v == "" {
		if fd.Required {
			return "is required"
		}
		return ""
	}
	limit := agentline.MaxShortAnswer
	if fd.Type == agentline.FieldTextarea {
		limit = agentline.MaxAnswerLength
	}
	if !utf8.ValidString(v) {
		return "is not valid text"
	}
	if n := utf8.RuneCountInString(v); n > limit {
		return fmt.Sprintf("is longer than %d characters", limit)
	}
	for _, c := range v {
		if unicode.IsControl(c) && !(fd.Type == agentline.FieldTextarea && (c == '\n' || c == '\r' || c == '\t')) {
			return "contains characters that are not allowed"
		}
	}
	switch fd.Type {
	case agentline.FieldEmail:
		a, err := mail.ParseAddress(v)
		if err != nil || a.Address != v || a.Name != "" || !strings.Contains(v[strings.LastIndex(v, "@"):], ".") {
			return "must be an email address, such as name@example.com"
		}
	case agentline.FieldTel:
		if !phone.MatchString(v) {
			return "must be a phone number, such as +1 415 555 0100"
		}
	case agentline.FieldSelect:
		for _, o := range fd.Options {
			if o == v {
				return ""
			}
		}
		return "must be one of the choices"
	}
	return ""
}
