package campaign

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentline/agentline"
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
	reach := reachability(w, now)
	kept := up.Contacts[:0]
	for _, ct := range up.Contacts {
		zones, err := Zones(ct.PhoneNumber, ct.Timezone)
		if err == nil && reach(zones) {
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

// reachability returns whether w ever opens, from now on, in every one of
// a set of zones at once; each set is worked out once.
func reachability(w Window, now time.Time) func(zones []*time.Location) bool {
	open := map[string]bool{}
	return func(zones []*time.Location) bool {
		key := zoneKey(zones)
		ok, seen := open[key]
		if !seen {
			_, ok = NextOpen(w, now, zones)
			open[key] = ok
		}
		return ok
	}
}

// strandCheck is the check of a change of a campaign's window (see
// UpdateCampaignChecked): it refuses the window w when it would never open
// in all the zones at once of contacts still to be dialed, which would
// then wait forever and keep the campaign from completing. The refusal
// counts them and names one, so the user can keep a window that opens
// for them; contacts whose zones are unknown (none can be stored) are not
// the new window's doing and are let be.
func strandCheck(w Window, now time.Time) func([]agentline.CampaignContact) error {
	return func(waiting []agentline.CampaignContact) error {
		reach := reachability(w, now)
		stranded, example, zoneCount := 0, "", 0
		for _, ct := range waiting {
			zones, err := Zones(ct.PhoneNumber, ct.Timezone)
			if err != nil || reach(zones) {
				continue
			}
			if stranded++; example == "" {
				example, zoneCount = ct.PhoneNumber, len(zones)
			}
		}
		if stranded == 0 {
			return nil
		}
		return agentline.Invalid("calling_window", "this calling window is never open in all the time zones of %d contact(s) still to be called "+
			"at once, such as %s (%d time zones, and no timezone given): they would wait forever. Keep a window open for them "+
			"(the current one is), or cancel the campaign and upload them to a new one with a timezone each", stranded, example, zoneCount)
	}
}

// zoneKey names a set of zones.
func zoneKey(zones []*time.Location) string {
	names := make([]string, len(zones))
	for i, z := range zones {
		names[i] = z.String()
	}
	return strings.Join(names, ",")
}
