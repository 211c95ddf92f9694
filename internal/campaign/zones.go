package campaign

import (
	"slices"
	"sync"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/agentline/agentline"
)

// Zones returns the time zones in which a contact's calling window is
// checked. An explicit zone (the contact's timezone) wins: it must be an
// IANA name this server knows, and not "Local", which would mean the
// server's own zone. Without one, the zones are those the number's prefix
// maps to (github.com/nyaruka/phonenumbers, from Google's libphonenumber):
// one for most numbers, several for a prefix that spans zones (Alaska's
// 907 maps to Anchorage and Adak; a number of no known area, such as a
// US toll-free or 555 number, to every zone of its country).
//
// A number the mapper places in no zone (international networks such as
// +882, global freephone +800) is refused with an error asking for a
// timezone: guessing a zone could call someone at night. So is a zone the
// server's time zone database lacks.
func Zones(phone, explicitTZ string) ([]*time.Location, error) {
	if explicitTZ != "" {
		loc, err := loadZone(explicitTZ)
		if err != nil {
			return nil, agentline.Invalid("timezone", "timezone %s is not a known IANA time zone name, such as America/New_York or Europe/Berlin", quote(explicitTZ))
		}
		return []*time.Location{loc}, nil
	}
	e164, num, err := normalizePhone(phone)
	if err != nil {
		return nil, err
	}
	names, err := phonenumbers.GetTimezonesForNumber(num)
	if err != nil || len(names) == 0 || slices.Contains(names, phonenumbers.UNKNOWN_TIMEZONE) {
		return nil, agentline.Invalid("timezone", "no time zone is known for %s; give the contact a timezone, such as America/New_York", e164)
	}
	zones := make([]*time.Location, 0, len(names))
	for _, name := range names {
		loc, err := loadZone(name)
		if err != nil {
			return nil, agentline.Invalid("timezone", "the time zone of %s (%s) is missing from this server's time zone database; give the contact a timezone", e164, name)
		}
		zones = append(zones, loc)
	}
	return zones, nil
}

// zoneCache holds the zones loaded so far by name: time.LoadLocation
// reads and parses a file on every call, and the engine asks for the same
// few zones over and over. It only grows with names that loaded, so it is
// bounded by the size of the time zone database.
var zoneCache sync.Map

// maxZoneName bounds a zone name: the longest IANA name has 32 bytes.
const maxZoneName = 64

// loadZone loads an IANA zone by name, refusing "Local" and the empty
// name (which LoadLocation takes as the server's zone and UTC).
func loadZone(name string) (*time.Location, error) {
	if v, ok := zoneCache.Load(name); ok {
		return v.(*time.Location), nil
	}
	if name == "" || name == "Local" || len(name) > maxZoneName || name == phonenumbers.UNKNOWN_TIMEZONE {
		return nil, agentline.Invalid("timezone", "not a time zone name")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zoneCache.Store(name, loc)
	return loc, nil
}

// OpenIn reports whether the window is open at t in every one of zones,
// so that a contact whose number spans several zones is called neither
// early in the latest of them nor late in the earliest. With no zones, or
// a window that does not validate, it is never open.
func OpenIn(w Window, t time.Time, zones []*time.Location) bool {
	s, err := w.schedule()
	if err != nil || len(zones) == 0 || slices.Contains(zones, nil) {
		return false
	}
	return s.openIn(t, zones)
}

func (s schedule) openIn(t time.Time, zones []*time.Location) bool {
	for _, loc := range zones {
		if !s.contains(t, loc) {
			return false
		}
	}
	return true
}

// NextOpen returns the earliest instant at or after t, in t's location,
// at which the window is open in every one of zones, and true; or false
// when there is none within fifteen days. False means the contact cannot
// be called under this window: the zones are too far apart for its hours
// (a one-hour window across US zones three hours apart), or there are no
// zones, or the window does not validate.
func NextOpen(w Window, t time.Time, zones []*time.Location) (time.Time, bool) {
	s, err := w.schedule()
	if err != nil || len(zones) == 0 || slices.Contains(zones, nil) {
		return time.Time{}, false
	}
	if s.openIn(t, zones) {
		return t, true
	}
	// The open instants in all zones at once start where one zone's open
	// instants start, so the earliest of those that is open everywhere is
	// the answer.
	end := t.Add(searchHorizon)
	var starts []time.Time
	for _, loc := range uniqueZones(zones) {
		starts = s.openings(starts, t, end, loc)
	}
	slices.SortFunc(starts, time.Time.Compare)
	for i, u := range starts {
		if !u.After(t) || u.After(end) || i > 0 && u.Equal(starts[i-1]) {
			continue
		}
		if s.openIn(u, zones) {
			return u.In(t.Location()), true
		}
	}
	return time.Time{}, false
}

// uniqueZones drops repeated zones, so a list that names a zone twice
// costs no more than naming it once.
func uniqueZones(zones []*time.Location) []*time.Location {
	out := make([]*time.Location, 0, len(zones))
	seen := make(map[string]bool, len(zones))
	for _, loc := range zones {
		if !seen[loc.String()] {
			seen[loc.String()] = true
			out = append(out, loc)
		}
	}
	return out
}
