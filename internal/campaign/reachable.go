package campaign

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// DropUnreachable moves to up's errors the contacts that w never opens for
// in every one of their zones at once, from now on. A +1 number with no
// known area (toll-free, area code 555) maps to every zone of the region,
// from Guam to Newfoundland, and no window shorter than most of a day
// holds in all of them: stored, such a contact would wait forever and keep
// its campaign from completing, so the upload refuses it and asks for a
// timezone instead. Contacts whose numbers share a set of zones are
// checked once.
func DropUnreachable(up *Upload, w Window, now time.Time) {
	open := map[string]bool{}
	kept := up.Contacts[:0]
	for _, ct := range up.Contacts {
		zones, err := Zones(ct.PhoneNumber, ct.Timezone)
		key := zoneKey(zones)
		ok, seen := open[key]
		if err == nil && !seen {
			_, ok = NextOpen(w, now, zones)
			open[key] = ok
		}
		if err == nil && ok {
			kept = append(kept, ct)
			continue
		}
		msg := fmt.Sprintf("the calling window is never open in all %d time zones of %s at once; give the contact a timezone", len(zones), ct.PhoneNumber)
		if err != nil {
			msg = err.Error()
		}
		up.Errors = append(up.Errors, RowError{Line: ct.Line, Message: msg})
	}
	up.Contacts = kept
	slices.SortStableFunc(up.Errors, func(a, b RowError) int { return a.Line - b.Line })
}

// zoneKey names a set of zones.
func zoneKey(zones []*time.Location) string {
	names := make([]string, len(zones))
	for i, z := range zones {
		names[i] = z.String()
	}
	return strings.Join(names, ",")
}
