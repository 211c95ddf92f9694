package campaign

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentline/agentline"
)

// The CSV columns with a meaning of their own; every other column is a
// variable. They are matched without regard to case or surrounding
// spaces.
const (
	colPhone         = "phone_number"
	colTimezone      = "timezone"
	colConsentSource = "consent_source"
	colConsentAt     = "consent_at"
)

// header is what a CSV header row says about the columns: where the
// reserved ones are (-1 when absent) and the variable each other one
// holds.
type header struct {
	width                         int
	phone, tz, consentSrc, consAt int
	vars                          map[int]string
}

// ParseContactsCSV reads a contacts upload in CSV (RFC 4180): a header row
// that names a phone_number column, then one contact a row. See the
// package documentation for the columns. It refuses the whole upload for
// a file it cannot read as CSV (a stray quote, an empty file, a bad
// header) and when it holds more than max rows, naming the limit; a bad
// row is a RowError and the others are kept. Blank rows, a UTF-8 byte
// order mark and CRLF line ends are accepted. The caller bounds the bytes
// read (http.MaxBytesReader).
func ParseContactsCSV(r io.Reader, max int) (Upload, error) {
	c, err := newCollector(max)
	if err != nil {
		return Upload{}, err
	}
	br := bufio.NewReader(r)
	if err := skipBOM(br); err != nil {
		return Upload{}, err
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // checked here, with a clearer message
	first, err := cr.Read()
	if err == io.EOF {
		return Upload{}, agentline.Errorf(agentline.EInvalid, "the CSV file is empty; its first line must be a header naming a phone_number column")
	}
	if err != nil {
		return Upload{}, csvError(err)
	}
	h, err := parseHeader(first)
	if err != nil {
		return Upload{}, err
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return c.up, nil
		}
		if err != nil {
			return Upload{}, csvError(err)
		}
		if blank(rec) {
			continue
		}
		if err := c.count(); err != nil {
			return Upload{}, err
		}
		line, _ := cr.FieldPos(0)
		c.add(h.row(rec, line))
	}
}

// skipBOM drops a UTF-8 byte order mark, which spreadsheet programs write
// at the start of a "CSV UTF-8" file, and refuses UTF-16, which they write
// for "Unicode text".
func skipBOM(br *bufio.Reader) error {
	start, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(start, []byte("\xef\xbb\xbf")):
		_, err := br.Discard(3)
		return err
	case bytes.HasPrefix(start, []byte("\xff\xfe")), bytes.HasPrefix(start, []byte("\xfe\xff")):
		return agentline.Errorf(agentline.EInvalid, "the file is UTF-16 text; save it as CSV in UTF-8")
	}
	return nil
}

// csvError turns a CSV syntax error into a message naming the line.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return agentline.Errorf(agentline.EInvalid, "the CSV file cannot be read at line %d: %v; a cell holding a comma, a quote or a line break must be in double quotes, with each quote inside doubled", pe.Line, pe.Err)
	}
	return agentline.Errorf(agentline.EInvalid, "the CSV file cannot be read: %v", err)
}

// blank reports whether every cell of rec is empty or spaces, as in the
// trailing ",,," rows spreadsheets export.
func blank(rec []string) bool {
	for _, cell := range rec {
		if strings.TrimSpace(cell) != "" {
			return false
		}
	}
	return true
}

func parseHeader(names []string) (header, error) {
	h := header{width: len(names), phone: -1, tz: -1, consentSrc: -1, consAt: -1, vars: map[int]string{}}
	seen := map[string]bool{}
	for i, raw := range names {
		name := strings.TrimSpace(raw)
		key := strings.ToLower(name)
		switch {
		case name == "":
			return h, agentline.Errorf(agentline.EInvalid, "column %d of the CSV header has no name; name it or remove it", i+1)
		case !utf8.ValidString(name):
			return h, agentline.Errorf(agentline.EInvalid, "the CSV header is not UTF-8 text; save the file as CSV in UTF-8")
		case seen[key]:
			return h, agentline.Errorf(agentline.EInvalid, "the CSV header names column %s more than once", quote(name))
		}
		seen[key] = true
		switch key {
		case colPhone:
			h.phone = i
		case colTimezone:
			h.tz = i
		case colConsentSource:
			h.consentSrc = i
		case colConsentAt:
			h.consAt = i
		default:
			h.vars[i] = name
		}
	}
	// A missing phone_number first: a file without a header has its first
	// contact where the header should be, and that is what to say.
	if h.phone < 0 {
		return h, agentline.Errorf(agentline.EInvalid, "the CSV header has no phone_number column; its first line must name the columns, such as phone_number,first_name (found %s)", quote(strings.Join(names, ",")))
	}
	for i := range names {
		if name, ok := h.vars[i]; ok && !variableName.MatchString(name) {
			return h, agentline.Errorf(agentline.EInvalid, "CSV column %s cannot be a variable: a name has letters, digits and _, starts with a letter or _, and has at most 64 characters", quote(name))
		}
	}
	if len(h.vars) > MaxVariables {
		return h, agentline.Errorf(agentline.EInvalid, "the CSV file has %d variable columns; a contact has at most %d variables", len(h.vars), MaxVariables)
	}
	return h, nil
}

// row reads one record under h. Variables keep their cells as they are
// (an empty cell is an empty value); the reserved cells are trimmed.
func (h header) row(rec []string, line int) row {
	r := row{line: line}
	if len(rec) != h.width {
		r.problems = append(r.problems, fmt.Sprintf("the row has %d cells and the header %d", len(rec), h.width))
		r.broken = true
		return r
	}
	r.phone = rec[h.phone]
	if h.tz >= 0 {
		r.timezone = rec[h.tz]
	}
	if h.consentSrc >= 0 {
		r.consentSource = rec[h.consentSrc]
	}
	if h.consAt >= 0 {
		r.consentAt = rec[h.consAt]
	}
	r.hasConsent = strings.TrimSpace(r.consentSource) != "" || strings.TrimSpace(r.consentAt) != ""
	if len(h.vars) > 0 {
		r.vars = make(map[string]string, len(h.vars))
		for i, name := range h.vars {
			r.vars[name] = rec[i]
		}
	}
	return r
}
