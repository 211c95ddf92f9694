package listing

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Cursor is a position in a list: the sort key of the last item of a
// page, so that the next page starts right after it however many rows
// were added or removed meanwhile (a keyset, not an offset). Time is set
// for lists ordered by a time and then an id; ID alone for lists ordered
// by id. Clients see it only encoded, as the opaque next_cursor.
type Cursor struct {
	Time time.Time
	ID   string
}

// After is the cursor that follows the item with id (an integer id).
func After(id int64) Cursor { return Cursor{ID: strconv.FormatInt(id, 10)} }

// AfterTime is the cursor that follows the item at t with id.
func AfterTime(t time.Time, id string) Cursor { return Cursor{Time: t.UTC(), ID: id} }

// String encodes the cursor: base64url of "time|id", or of "id" alone.
// The conversations list gave out the first form before every list
// shared this helper, so its cursors stay valid.
func (c Cursor) String() string {
	raw := c.ID
	if !c.Time.IsZero() {
		raw = c.Time.UTC().Format(time.RFC3339Nano) + "|" + c.ID
	}
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// Int is the cursor's id as an integer id, for lists of rows with one.
func (c Cursor) Int() (int64, error) {
	n, err := strconv.ParseInt(c.ID, 10, 64)
	if err != nil || n <= 0 {
		return 0, errBadCursor
	}
	return n, nil
}

// errBadCursor answers any cursor this API did not give out.
var errBadCursor = agentline.Invalid("cursor", "cursor is not one this API gave out: pass next_cursor as it is")

// ParseCursor decodes a cursor from String; "" is nil, the first page. A
// cursor this API could not have given out is 400 naming cursor.
func ParseCursor(v string) (*Cursor, error) {
	if v == "" {
		return nil, nil
	}
	if len(v) > 200 {
		return nil, errBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) == 0 {
		return nil, errBadCursor
	}
	at, id, timed := strings.Cut(string(raw), "|")
	if !timed {
		return &Cursor{ID: at}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || id == "" {
		return nil, errBadCursor
	}
	return &Cursor{Time: t.UTC(), ID: id}, nil
}

// IntCursor reads the query's cursor of a list ordered by integer id: the
// id after which the page starts, 0 for the first page.
func IntCursor(q url.Values) (int64, error) {
	c, err := ParseCursor(q.Get("cursor"))
	if err != nil || c == nil {
		return 0, err
	}
	if !c.Time.IsZero() {
		return 0, errBadCursor
	}
	return c.Int()
}

// IntPage reads the query's page of a list ordered by integer id: its
// limit (the default page size when absent) and the id it starts after.
func IntPage(q url.Values) (limit int, after int64, err error) {
	if limit, err = Limit(q, DefaultPageSize, MaxPageSize); err != nil {
		return 0, 0, err
	}
	after, err = IntCursor(q)
	return limit, after, err
}

// TimeCursor reads the query's cursor of a list ordered by a time and an
// id; nil for the first page.
func TimeCursor(q url.Values) (*Cursor, error) {
	c, err := ParseCursor(q.Get("cursor"))
	if err != nil || c == nil {
		return nil, err
	}
	if c.Time.IsZero() {
		return nil, errBadCursor
	}
	return c, nil
}

// Limit reads the query's limit: def when absent, else 1 to max.
func Limit(q url.Values, def, max int) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, agentline.Invalid("limit", "limit must be between 1 and %d", max)
	}
	return n, nil
}

// Next cuts a list read with one more row than limit to the page and
// returns the cursor of the next page, nil when this page is the last.
// key gives the cursor after an item.
func Next[T any](list []T, limit int, key func(T) Cursor) ([]T, *string) {
	if limit <= 0 || len(list) <= limit {
		return list, nil
	}
	list = list[:limit]
	c := key(list[limit-1]).String()
	return list, &c
}

// NextCursorHeader carries the next page's cursor of a list whose answer
// is a bare JSON array, which has no room for a next_cursor field.
const NextCursorHeader = "X-Next-Cursor"

// Slice pages a list the store reads whole (a project's members, agents,
// channels, ...: short lists, in ascending order of key). Without limit
// and cursor it is the whole list, as before these lists had pages; with
// them, the page after the cursor, at most limit (default and maximum
// MaxPageSize), and the next page's cursor, nil on the last.
func Slice[T any](q url.Values, list []T, key func(T) Cursor) ([]T, *string, error) {
	if q.Get("limit") == "" && q.Get("cursor") == "" {
		return list, nil, nil
	}
	limit, err := Limit(q, MaxPageSize, MaxPageSize)
	if err != nil {
		return nil, nil, err
	}
	after, err := ParseCursor(q.Get("cursor"))
	if err != nil {
		return nil, nil, err
	}
	start := 0
	for after != nil && start < len(list) && key(list[start]).compare(*after) <= 0 {
		start++
	}
	page, next := Next(list[start:], limit, key)
	if page == nil {
		page = []T{}
	}
	return page, next, nil
}

// Whole is Slice for a list whose answer is a bare JSON array, which has
// no room for a next_cursor field: the next page's cursor goes in the
// X-Next-Cursor header instead, when there is one.
func Whole[T any](w http.ResponseWriter, q url.Values, list []T, key func(T) Cursor) ([]T, error) {
	page, next, err := Slice(q, list, key)
	if next != nil {
		w.Header().Set(NextCursorHeader, *next)
	}
	return page, err
}

// WriteWhole answers 200 with Whole's page of list as a bare JSON array:
// the end of every handler that lists a short list the store reads whole.
func WriteWhole[T any](w http.ResponseWriter, r *http.Request, list []T, key func(T) Cursor) error {
	page, err := Whole(w, r.URL.Query(), list, key)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, page)
	return nil
}

// compare orders cursors by time, then by id: integer ids by value
// (decimal strings without leading zeros: by length first), others as
// strings.
func (c Cursor) compare(o Cursor) int {
	if n := c.Time.Compare(o.Time); n != 0 {
		return n
	}
	if numeric(c.ID) && numeric(o.ID) && len(c.ID) != len(o.ID) {
		return len(c.ID) - len(o.ID)
	}
	return strings.Compare(c.ID, o.ID)
}

func numeric(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
