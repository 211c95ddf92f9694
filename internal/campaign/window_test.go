package campaign_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
)

func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// at is a wall-clock reading in loc; it fails the test when loc skips it.
func at(t testing.TB, loc *time.Location, s string) time.Time {
	t.Helper()
	u, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func utc(t testing.TB, s string) time.Time {
	t.Helper()
	u, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var allDays = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}

func TestWindowValidate(t *testing.T) {
	tests := []struct {
		name  string
		w     campaign.Window
		field string // "" when valid
		want  string // in the message
	}{
		{"default", campaign.DefaultWindow(), "", ""},
		{"all day every day", campaign.Window{Days: allDays, Start: "00:00", End: "24:00"}, "", ""},
		{"one minute", campaign.Window{Days: []string{"sun"}, Start: "23:59", End: "24:00"}, "", ""},
		{"no days", campaign.Window{Start: "09:00", End: "20:00"}, "calling_window.days", "at least one day"},
		{"capitalised day", campaign.Window{Days: []string{"Mon"}, Start: "09:00", End: "20:00"}, "calling_window.days", `unknown day "Mon"; use mon, tue`},
		{"long day name", campaign.Window{Days: []string{"monday"}, Start: "09:00", End: "20:00"}, "calling_window.days", "unknown day"},
		{"day twice", campaign.Window{Days: []string{"mon", "tue", "mon"}, Start: "09:00", End: "20:00"}, "calling_window.days", `"mon" more than once`},
		{"start without leading zero", campaign.Window{Days: allDays, Start: "9:00", End: "20:00"}, "calling_window.start", `HH:MM`},
		{"start 24:00", campaign.Window{Days: allDays, Start: "24:00", End: "24:00"}, "calling_window.start", `got "24:00"`},
		{"start with seconds", campaign.Window{Days: allDays, Start: "09:00:00", End: "20:00"}, "calling_window.start", "HH:MM"},
		{"start empty", campaign.Window{Days: allDays, End: "20:00"}, "calling_window.start", `got ""`},
		{"minute 60", campaign.Window{Days: allDays, Start: "09:60", End: "20:00"}, "calling_window.start", "HH:MM"},
		{"am/pm", campaign.Window{Days: allDays, Start: "9am", End: "20:00"}, "calling_window.start", `got "9am"`},
		{"end 24:01", campaign.Window{Days: allDays, Start: "09:00", End: "24:01"}, "calling_window.end", `"24:00"`},
		{"end 25:00", campaign.Window{Days: allDays, Start: "09:00", End: "25:00"}, "calling_window.end", "HH:MM"},
		{"end sign", campaign.Window{Days: allDays, Start: "09:00", End: "+1:00"}, "calling_window.end", "HH:MM"},
		{"start equals end", campaign.Window{Days: allDays, Start: "09:00", End: "09:00"}, "calling_window.start", "must be before calling_window.end"},
		{"over midnight", campaign.Window{Days: allDays, Start: "22:00", End: "02:00"}, "calling_window.start", "cannot span midnight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.w.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var e *agentline.Error
			if !errors.As(err, &e) || e.Code != agentline.EInvalid || e.Field != tt.field {
				t.Fatalf("Validate() = %#v, want invalid_request on %s", err, tt.field)
			}
			if !strings.Contains(e.Message, tt.field) || !strings.Contains(e.Message, tt.want) {
				t.Errorf("message %q does not name %s and say %q", e.Message, tt.field, tt.want)
			}
		})
	}
}

func TestDefaultWindowIsACopy(t *testing.T) {
	w := campaign.DefaultWindow()
	w.Days[0] = "sun"
	if got := campaign.DefaultWindow(); got.Days[0] != "mon" || got.Start != "09:00" || got.End != "20:00" || len(got.Days) != 5 {
		t.Errorf("DefaultWindow() = %+v after a caller changed its copy", got)
	}
}

func TestWindowContains(t *testing.T) {
	ny := zone(t, "America/New_York")
	w := campaign.DefaultWindow()
	tests := []struct {
		name string
		t    time.Time
		want bool
	}{
		{"monday at start", at(t, ny, "2025-06-02 09:00"), true},
		{"a second before start", at(t, ny, "2025-06-02 09:00").Add(-time.Second), false},
		{"a second before end", at(t, ny, "2025-06-02 20:00").Add(-time.Second), true},
		{"at end", at(t, ny, "2025-06-02 20:00"), false},
		{"saturday noon", at(t, ny, "2025-06-07 12:00"), false},
		{"friday evening", at(t, ny, "2025-06-06 19:30"), true},
		// 14:00 UTC on a Monday is 10:00 in New York (EDT).
		{"given in UTC", utc(t, "2025-06-02T14:00:00Z"), true},
		// 01:00 UTC on a Tuesday is still Monday 21:00 in New York.
		{"late monday in UTC is tuesday", utc(t, "2025-06-03T01:00:00Z"), false},
		// 13:30 UTC on Saturday is 09:30 Saturday: a closed day.
		{"closed day", utc(t, "2025-06-07T13:30:00Z"), false},
	}
	for _, tt := range tests {
		if got := w.Contains(tt.t, ny); got != tt.want {
			t.Errorf("%s: Contains(%v) = %v, want %v", tt.name, tt.t, got, tt.want)
		}
	}
	if w.Contains(at(t, ny, "2025-06-02 12:00"), nil) {
		t.Error("Contains with a nil zone is true")
	}
	if (campaign.Window{Days: allDays, Start: "20:00", End: "09:00"}).Contains(at(t, ny, "2025-06-02 22:00"), ny) {
		t.Error("an invalid window contains an instant")
	}
}

// A window open all the time is open at every hour of a year, across both
// daylight-saving changes, and Next is the identity.
func TestWindowOpenAllWeek(t *testing.T) {
	w := campaign.Window{Days: allDays, Start: "00:00", End: "24:00"}
	for _, name := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "UTC"} {
		loc := zone(t, name)
		start := utc(t, "2025-01-01T00:00:00Z")
		for u := start; u.Before(start.AddDate(1, 0, 0)); u = u.Add(37 * time.Minute) {
			if !w.Contains(u, loc) {
				t.Fatalf("%s: closed at %v", name, u.In(loc))
			}
			if got := w.Next(u, loc); !got.Equal(u) {
				t.Fatalf("%s: Next(%v) = %v", name, u, got)
			}
		}
	}
}

func TestWindowNext(t *testing.T) {
	ny, berlin := zone(t, "America/New_York"), zone(t, "Europe/Berlin")
	tests := []struct {
		name string
		w    campaign.Window
		loc  *time.Location
		t    time.Time
		want time.Time
	}{
		{"open now", campaign.DefaultWindow(), ny, at(t, ny, "2025-06-02 12:34"), at(t, ny, "2025-06-02 12:34")},
		{"early morning", campaign.DefaultWindow(), ny, at(t, ny, "2025-06-02 06:10"), at(t, ny, "2025-06-02 09:00")},
		{"after hours", campaign.DefaultWindow(), ny, at(t, ny, "2025-06-02 20:00"), at(t, ny, "2025-06-03 09:00")},
		{"friday night to monday", campaign.DefaultWindow(), ny, at(t, ny, "2025-06-06 21:00"), at(t, ny, "2025-06-09 09:00")},
		{"in UTC, answered in UTC", campaign.DefaultWindow(), ny, utc(t, "2025-06-07T02:00:00Z"), utc(t, "2025-06-09T13:00:00Z")},
		// New York springs forward on 2025-03-09 at 02:00 EST to 03:00 EDT:
		// 02:30 never happens, so the window opens at the jump.
		{"ny start in skipped hour", campaign.Window{Days: allDays, Start: "02:30", End: "05:00"}, ny,
			at(t, ny, "2025-03-09 00:00"), utc(t, "2025-03-09T07:00:00Z")},
		// A window wholly inside the skipped hour is not open that day.
		{"ny window inside skipped hour", campaign.Window{Days: allDays, Start: "02:15", End: "02:45"}, ny,
			at(t, ny, "2025-03-09 00:00"), at(t, ny, "2025-03-10 02:15")},
		{"ny sunday-only window inside skipped hour", campaign.Window{Days: []string{"sun"}, Start: "02:15", End: "02:45"}, ny,
			at(t, ny, "2025-03-09 00:00"), at(t, ny, "2025-03-16 02:15")},
		// New York falls back on 2025-11-02 at 02:00 EDT to 01:00 EST: 01:30
		// happens twice; the first counts.
		{"ny start in repeated hour", campaign.Window{Days: allDays, Start: "01:30", End: "03:00"}, ny,
			at(t, ny, "2025-11-02 00:00"), utc(t, "2025-11-02T05:30:00Z")},
		// At 01:45 EDT a 01:00-01:30 window has closed; when the clock is set
		// back to 01:00 EST it is open again.
		{"ny reopens when the clock goes back", campaign.Window{Days: allDays, Start: "01:00", End: "01:30"}, ny,
			utc(t, "2025-11-02T05:45:00Z"), utc(t, "2025-11-02T06:00:00Z")},
		{"ny after the second pass", campaign.Window{Days: allDays, Start: "01:00", End: "01:30"}, ny,
			utc(t, "2025-11-02T06:30:00Z"), at(t, ny, "2025-11-03 01:00")},
		// Berlin springs forward on 2025-03-30 at 02:00 CET to 03:00 CEST.
		{"berlin start in skipped hour", campaign.Window{Days: allDays, Start: "02:30", End: "04:00"}, berlin,
			at(t, berlin, "2025-03-30 00:00"), utc(t, "2025-03-30T01:00:00Z")},
		{"berlin day after spring forward", campaign.Window{Days: allDays, Start: "02:30", End: "04:00"}, berlin,
			utc(t, "2025-03-30T02:00:00Z"), utc(t, "2025-03-31T00:30:00Z")},
		// Berlin falls back on 2025-10-26 at 03:00 CEST to 02:00 CET.
		{"berlin first 02:30", campaign.Window{Days: allDays, Start: "02:30", End: "02:45"}, berlin,
			at(t, berlin, "2025-10-26 00:00"), utc(t, "2025-10-26T00:30:00Z")},
		{"berlin second 02:30", campaign.Window{Days: allDays, Start: "02:30", End: "02:45"}, berlin,
			utc(t, "2025-10-26T00:50:00Z"), utc(t, "2025-10-26T01:30:00Z")},
		{"berlin default window over the change", campaign.DefaultWindow(), berlin,
			at(t, berlin, "2025-10-24 20:30"), at(t, berlin, "2025-10-27 09:00")},
		// Samoa skipped Friday 2011-12-30 when it crossed the date line.
		{"samoa skipped friday", campaign.Window{Days: []string{"fri"}, Start: "09:00", End: "17:00"}, zone(t, "Pacific/Apia"),
			at(t, zone(t, "Pacific/Apia"), "2011-12-29 18:00"), at(t, zone(t, "Pacific/Apia"), "2012-01-06 09:00")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.w.Next(tt.t, tt.loc)
			if !got.Equal(tt.want) {
				t.Fatalf("Next(%v) = %v, want %v", tt.t.In(tt.loc), got.In(tt.loc), tt.want.In(tt.loc))
			}
			if got.Location() != tt.t.Location() {
				t.Errorf("Next answered in %v, want t's location %v", got.Location(), tt.t.Location())
			}
			if !tt.w.Contains(got, tt.loc) {
				t.Errorf("the window is closed at Next's answer %v", got.In(tt.loc))
			}
		})
	}
}

func TestWindowNextOfNothing(t *testing.T) {
	now := utc(t, "2025-06-02T12:00:00Z")
	if got := campaign.DefaultWindow().Next(now, nil); !got.IsZero() {
		t.Errorf("Next with a nil zone = %v, want the zero Time", got)
	}
	if got := (campaign.Window{Start: "09:00", End: "20:00"}).Next(now, time.UTC); !got.IsZero() {
		t.Errorf("Next of a window with no days = %v, want the zero Time", got)
	}
}

// bruteNext finds the earliest instant at or after t at which every zone
// is open by trying t and then each whole minute, which holds for zones
// whose offsets and changes fall on whole minutes (all of them since the
// 1970s).
func bruteNext(w campaign.Window, t time.Time, zones []*time.Location, horizon time.Duration) (time.Time, bool) {
	open := func(u time.Time) bool {
		for _, loc := range zones {
			if !w.Contains(u, loc) {
				return false
			}
		}
		return true
	}
	if open(t) {
		return t, true
	}
	for u := t.Truncate(time.Minute).Add(time.Minute); !u.After(t.Add(horizon)); u = u.Add(time.Minute) {
		if open(u) {
			return u, true
		}
	}
	return time.Time{}, false
}

// NextOpen agrees with a minute-by-minute search for random windows and
// instants near daylight-saving changes, in one zone and in pairs.
func TestNextOpenMatchesBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("minute-by-minute search")
	}
	names := []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu", "America/Los_Angeles", "America/St_Johns", "Pacific/Chatham", "UTC"}
	bases := []string{"2025-03-08T00:00:00Z", "2025-03-29T12:00:00Z", "2025-10-25T12:00:00Z", "2025-11-01T00:00:00Z", "2025-04-05T00:00:00Z", "2025-09-27T00:00:00Z", "2025-06-15T00:00:00Z"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 150 {
		w := randomWindow(rng)
		zones := []*time.Location{zone(t, names[rng.IntN(len(names))])}
		if i%2 == 1 {
			zones = append(zones, zone(t, names[rng.IntN(len(names))]))
		}
		start := utc(t, bases[rng.IntN(len(bases))]).Add(time.Duration(rng.Int64N(int64(48 * time.Hour))))
		if i%3 == 0 {
			start = start.Add(time.Duration(rng.IntN(60)) * time.Second)
		}
		want, wantOK := bruteNext(w, start, zones, 15*24*time.Hour)
		got, ok := campaign.NextOpen(w, start, zones)
		if ok != wantOK || !got.Equal(want) {
			t.Fatalf("NextOpen(%+v, %v, %v) = %v, %v; a minute-by-minute search finds %v, %v", w, start, zones, got, ok, want, wantOK)
		}
	}
}

func randomWindow(rng *rand.Rand) campaign.Window {
	var w campaign.Window
	for _, d := range allDays {
		if rng.IntN(2) == 0 {
			w.Days = append(w.Days, d)
		}
	}
	if len(w.Days) == 0 {
		w.Days = []string{allDays[rng.IntN(7)]}
	}
	// Starts and ends on quarter hours, with a bias to the small hours
	// where the daylight-saving changes are.
	start := rng.IntN(24 * 4)
	if rng.IntN(2) == 0 {
		start = rng.IntN(4 * 4)
	}
	end := start + 1 + rng.IntN(24*4-start)
	clock := func(q int) string {
		return time.Date(2000, 1, 1, 0, 15*q, 0, 0, time.UTC).Format("15:04")
	}
	w.Start, w.End = clock(start), clock(end)
	if end == 24*4 {
		w.End = "24:00"
	}
	return w
}
