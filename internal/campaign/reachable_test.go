package campaign

import (
	"strings"
	"testing"
	"time"
)

// A contact the window never opens for in all its zones at once is an
// upload error, with its line; the others stay, in order.
func TestDropUnreachable(t *testing.T) {
	up := Upload{
		Contacts: []Contact{
			{PhoneNumber: "+12125550101", Line: 2},                              // New York
			{PhoneNumber: "+15555550102", Line: 3},                              // no known area: every zone of +1
			{PhoneNumber: "+15555550103", Timezone: "America/Chicago", Line: 5}, // the same, with its zone
			{PhoneNumber: "+15555550104", Line: 6},
		},
		Errors: []RowError{{Line: 4, Message: "bad row"}},
	}
	now := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	// 09:00 in Guam comes after 17:00 in Newfoundland: never all at once.
	office := Window{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:00"}
	DropUnreachable(&up, office, now)
	var kept []int
	for _, ct := range up.Contacts {
		kept = append(kept, ct.Line)
	}
	if len(kept) != 2 || kept[0] != 2 || kept[1] != 5 {
		t.Fatalf("kept lines %v, want [2 5]", kept)
	}
	var lines []int
	for _, e := range up.Errors {
		lines = append(lines, e.Line)
	}
	if len(lines) != 3 || lines[0] != 3 || lines[1] != 4 || lines[2] != 6 {
		t.Fatalf("error lines %v, want [3 4 6]", lines)
	}
	if msg := up.Errors[0].Message; !strings.Contains(msg, "give the contact a timezone") || !strings.Contains(msg, "+15555550102") {
		t.Errorf("message %q", msg)
	}
	// A window open around the clock every day holds in every zone.
	all := Window{Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Start: "00:00", End: "24:00"}
	up = Upload{Contacts: []Contact{{PhoneNumber: "+15555550102", Line: 2}}}
	if DropUnreachable(&up, all, now); len(up.Contacts) != 1 || len(up.Errors) != 0 {
		t.Errorf("around the clock: %+v", up)
	}
}
