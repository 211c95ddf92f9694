package campaign

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// Window is a campaign's calling window with its rules: the part of the
// week in which a campaign may call, in the callee's local time, the
// named days from Start (included) to End (excluded). A window never
// spans midnight: calling hours end the same evening they start. Its
// fields are agentline.CallingWindow's (Days: mon … sun; Start and End:
// "HH:MM" on a 24-hour clock, End "24:00" to keep it open to midnight),
// the one definition the domain and the store share; converting between
// the two costs nothing.
type Window agentline.CallingWindow

// DefaultWindow is the window of a campaign that names none: Monday to
// Friday, 09:00 to 20:00. Each call returns a new value, so a caller may
// change it freely.
func DefaultWindow() Window {
	return Window{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "20:00"}
}

type dayName struct {
	name string
	day  time.Weekday
}

// dayNames maps each accepted day name to its weekday, in the order the
// error messages list them.
var dayNames = []dayName{
	{"mon", time.Monday}, {"tue", time.Tuesday}, {"wed", time.Wednesday},
	{"thu", time.Thursday}, {"fri", time.Friday}, {"sat", time.Saturday}, {"sun", time.Sunday},
}

// The field names errors point at, as the campaign API spells them.
const (
	fieldDays  = "calling_window.days"
	fieldStart = "calling_window.start"
	fieldEnd   = "calling_window.end"
)

// schedule is a validated window in the form the checks use: which
// weekdays are open, and the open minutes of the day as [start, end).
type schedule struct {
	days       [7]bool
	start, end int
}

// Validate reports the first problem of w as an invalid_request error
// naming the field at fault, or nil when w can be used.
func (w Window) Validate() error {
	_, err := w.schedule()
	return err
}

func (w Window) schedule() (schedule, error) {
	var s schedule
	if len(w.Days) == 0 {
		return s, agentline.Invalid(fieldDays, `%s must name at least one day, such as "mon"`, fieldDays)
	}
	for _, name := range w.Days {
		i := slices.IndexFunc(dayNames, func(d dayName) bool { return d.name == name })
		if i < 0 {
			return s, agentline.Invalid(fieldDays, "%s has an unknown day %s; use %s", fieldDays, quote(name), knownDays())
		}
		if s.days[dayNames[i].day] {
			return s, agentline.Invalid(fieldDays, "%s names %q more than once", fieldDays, name)
		}
		s.days[dayNames[i].day] = true
	}
	var ok bool
	if s.start, ok = parseClock(w.Start, false); !ok {
		return s, agentline.Invalid(fieldStart, `%s must be a time of day as HH:MM on a 24-hour clock, from "00:00" to "23:59", such as "09:00"; got %s`, fieldStart, quote(w.Start))
	}
	if s.end, ok = parseClock(w.End, true); !ok {
		return s, agentline.Invalid(fieldEnd, `%s must be a time of day as HH:MM on a 24-hour clock, from "00:01" to "24:00", such as "20:00"; got %s`, fieldEnd, quote(w.End))
	}
	if s.start >= s.end {
		return s, agentline.Invalid(fieldStart, "%s (%s) must be before %s (%s): a window cannot span midnight", fieldStart, w.Start, fieldEnd, w.End)
	}
	return s, nil
}

func knownDays() string {
	names := make([]string, len(dayNames))
	for i, d := range dayNames {
		names[i] = d.name
	}
	return strings.Join(names, ", ")
}

// parseClock reads "HH:MM" as minutes since midnight. Only "24:00", and
// only when allow24, may go past 23:59.
func parseClock(s string, allow24 bool) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	switch {
	case m > 59, h > 24, h == 24 && (!allow24 || m != 0):
		return 0, false
	}
	return h*60 + m, true
}

// Contains reports whether the wall clock in loc at instant t is inside
// the window: an open day, and a time of day in [Start, End). A window
// that does not validate, or a nil loc, contains nothing, so a mistake
// never lets a call out.
func (w Window) Contains(t time.Time, loc *time.Location) bool {
	s, err := w.schedule()
	return err == nil && loc != nil && s.contains(t, loc)
}

func (s schedule) contains(t time.Time, loc *time.Location) bool {
	local := t.In(loc)
	if !s.days[local.Weekday()] {
		return false
	}
	m := local.Hour()*60 + local.Minute()
	return m >= s.start && m < s.end
}

// Next returns the earliest instant at or after t at which the window is
// open in loc, in t's location. Daylight-saving changes are followed as
// the clock on the callee's wall follows them: when the start falls in a
// skipped hour (02:30 on a spring-forward night), the window opens at the
// first instant after the jump; when it falls in a repeated hour, at its
// first occurrence. Next returns the zero Time for a window that does not
// validate or a nil loc.
func (w Window) Next(t time.Time, loc *time.Location) time.Time {
	next, _ := NextOpen(w, t, []*time.Location{loc})
	return next
}

// searchHorizon bounds the search for an open instant. A valid window
// opens within a week in any one zone, except when its only open hour of
// the week falls into a skipped daylight-saving hour: then it opens a
// week later. Fifteen days covers that; several zones that share no open
// instant within it never will.
const searchHorizon = 15 * 24 * time.Hour

// openings appends to out every instant in (t-1 day, end] at which the
// window may start to be open in loc: each instant whose wall clock reads
// Start on an open day (none in a skipped hour, two in a repeated one),
// and each change of loc's offset, where the wall clock jumps.
func (s schedule) openings(out []time.Time, t, end time.Time, loc *time.Location) []time.Time {
	y, m, d := t.In(loc).Date()
	days := int(end.Sub(t)/(24*time.Hour)) + 2
	for i := -1; i <= days; i++ {
		wall := time.Date(y, m, d+i, s.start/60, s.start%60, 0, 0, time.UTC)
		if s.days[wall.Weekday()] {
			out = appendWallInstants(out, wall, loc)
		}
	}
	for u := t; u.Before(end); {
		_, next := u.In(loc).ZoneBounds()
		if next.IsZero() || !next.After(u) {
			break
		}
		out = append(out, next)
		u = next
	}
	return out
}

// appendWallInstants appends the instants at which loc's wall clock reads
// wall (a clock reading written in UTC): none when a daylight-saving jump
// skips it, two when the clock is set back over it. Each candidate is the
// reading minus one of the offsets in force within half a day of it, which
// holds for every zone that changes its offset at most once in a day.
func appendWallInstants(out []time.Time, wall time.Time, loc *time.Location) []time.Time {
	guess := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), 0, 0, loc)
	var offsets []int
	for _, u := range []time.Time{guess.Add(-12 * time.Hour), guess, guess.Add(12 * time.Hour)} {
		if _, off := u.Zone(); !slices.Contains(offsets, off) {
			offsets = append(offsets, off)
		}
	}
	for _, off := range offsets {
		u := wall.Add(-time.Duration(off) * time.Second).In(loc)
		if sameWallClock(u, wall) {
			out = append(out, u)
		}
	}
	return out
}

func sameWallClock(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && a.Hour() == b.Hour() && a.Minute() == b.Minute() && a.Second() == b.Second()
}

// quote shows a caller's value in a message, cut short when long.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
