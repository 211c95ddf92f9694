package form_test

import (
	"testing"
)

// BenchmarkSubmit is one stored JSON submission through the handler, on
// SQLite: parsing, checking six fields, the per-IP counter and the insert.
func BenchmarkSubmit(b *testing.B) {
	d := newDirect(b, 1<<40)
	body := `{"name":"Ada Lovelace","email":"ada@example.com","phone":"+44 20 7946 0958","message":"Call me\nafter 5","topic":"Sales","consent":true}`
	for b.Loop() {
		if w := d.submit("application/json", "", body); w.Code != 201 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkSubmitInvalid is a refused form-encoded submission answered
// with the page again (no database write): what a flood of bad posts
// costs.
func BenchmarkSubmitInvalid(b *testing.B) {
	d := newDirect(b, 1<<40)
	body := "name=Ada&email=ada%40example&topic=Jobs"
	for b.Loop() {
		if w := d.submit("application/x-www-form-urlencoded", "text/html", body); w.Code != 400 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
