package listing_test

import (
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/listing"
)

func TestCursorRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 123, time.UTC)
	for _, c := range []listing.Cursor{listing.After(42), listing.AfterTime(at, "ses_x|y"), listing.AfterTime(at, "7")} {
		got, err := listing.ParseCursor(c.String())
		if err != nil || got == nil || *got != c {
			t.Errorf("%+v: parsed %+v, %v", c, got, err)
		}
	}
	// The conversations list's cursors from before the shared helper.
	if got, err := listing.ParseCursor("MjAyNi0wMy0wMVQxMDowMDowMFp8c2VzX2E"); err != nil || got.ID != "ses_a" || !got.Time.Equal(at.Truncate(time.Second)) {
		t.Errorf("old conversation cursor: %+v, %v", got, err)
	}
	for _, bad := range []string{"not*base64", "", "fA", "eHx5"} { // "", "|", "x|y"
		q := url.Values{"cursor": {bad}}
		_, err := listing.TimeCursor(q)
		if bad == "" {
			if err != nil {
				t.Errorf("no cursor: %v", err)
			}
			continue
		}
		if e, ok := err.(*agentline.Error); !ok || e.Field != "cursor" {
			t.Errorf("%q: %v, want invalid cursor", bad, err)
		}
	}
	if _, err := listing.IntCursor(url.Values{"cursor": {listing.AfterTime(at, "3").String()}}); err == nil {
		t.Error("a time cursor taken by an id-ordered list")
	}
}

func TestWhole(t *testing.T) {
	list := []int64{2, 3, 5, 8, 13}
	id := func(n int64) listing.Cursor { return listing.After(n) }
	w := httptest.NewRecorder()
	if got, err := listing.Whole(w, url.Values{}, list, id); err != nil || len(got) != 5 || w.Header().Get(listing.NextCursorHeader) != "" {
		t.Fatalf("no limit: %v %v %q", got, err, w.Header())
	}
	var walked []int64
	cursor := ""
	for range 10 {
		w := httptest.NewRecorder()
		page, err := listing.Whole(w, url.Values{"limit": {"2"}, "cursor": {cursor}}, list, id)
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, page...)
		if cursor = w.Header().Get(listing.NextCursorHeader); cursor == "" {
			break
		}
	}
	if len(walked) != 5 || walked[4] != 13 {
		t.Errorf("walked %v", walked)
	}
	// Ids compare as numbers: 10 comes after 9.
	got, _ := listing.Whole(httptest.NewRecorder(), url.Values{"cursor": {listing.After(9).String()}}, []int64{8, 9, 10}, id)
	if len(got) != 1 || got[0] != 10 {
		t.Errorf("after 9: %v", got)
	}
}
