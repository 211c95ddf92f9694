package campaign_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
)

func zoneNames(zones []*time.Location) []string {
	names := make([]string, len(zones))
	for i, z := range zones {
		names[i] = z.String()
	}
	slices.Sort(names)
	return names
}

func TestZones(t *testing.T) {
	tests := []struct {
		name, phone, tz string
		want            []string // zone names, sorted
		field, msg      string   // of the error, when one is expected
	}{
		{name: "explicit zone wins", phone: "+14155550100", tz: "Europe/Berlin", want: []string{"Europe/Berlin"}},
		{name: "explicit zone without a number", tz: "Asia/Tokyo", want: []string{"Asia/Tokyo"}},
		{name: "explicit UTC", phone: "+4930123456", tz: "UTC", want: []string{"UTC"}},
		{name: "Local refused", phone: "+14155550100", tz: "Local", field: "timezone", msg: `"Local" is not a known IANA time zone`},
		{name: "unknown zone", phone: "+14155550100", tz: "Mars/Olympus_Mons", field: "timezone", msg: "not a known IANA time zone"},
		{name: "zone in wrong case", phone: "+14155550100", tz: "america/new_york", field: "timezone", msg: "not a known IANA"},
		{name: "path as zone", phone: "+14155550100", tz: "../../etc/passwd", field: "timezone", msg: "not a known IANA"},
		{name: "san francisco", phone: "+14155550100", want: []string{"America/Los_Angeles"}},
		{name: "new york, formatted", phone: "+1 (212) 555-1234", want: []string{"America/New_York"}},
		{name: "berlin", phone: "+49 30 123456", want: []string{"Europe/Berlin"}},
		{name: "alaska spans two zones", phone: "+19075551234", want: []string{"America/Adak", "America/Anchorage"}},
		{name: "uk mobile spans crown dependencies", phone: "+447700900123", want: []string{"Europe/Guernsey", "Europe/Isle_of_Man", "Europe/London"}},
		{name: "international network has no zone", phone: "+882123456789", field: "timezone", msg: "no time zone is known for +882123456789; give the contact a timezone"},
		{name: "global freephone has no zone", phone: "+80012345678", field: "timezone", msg: "give the contact a timezone"},
		{name: "bad number", phone: "4155550100", field: "phone_number", msg: "E.164"},
		{name: "no number", field: "phone_number", msg: "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			zones, err := campaign.Zones(tt.phone, tt.tz)
			if tt.field != "" {
				var e *agentline.Error
				if !errors.As(err, &e) || e.Code != agentline.EInvalid || e.Field != tt.field || !strings.Contains(e.Message, tt.msg) {
					t.Fatalf("Zones(%q, %q) = %v, %v; want invalid_request on %s saying %q", tt.phone, tt.tz, zones, err, tt.field, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := zoneNames(zones); !slices.Equal(got, tt.want) {
				t.Errorf("Zones(%q, %q) = %v, want %v", tt.phone, tt.tz, got, tt.want)
			}
		})
	}
}

// A number of no known area maps to every zone of its country; for the
// NANP that is Guam to Adak, which no window of the day covers at once.
func TestZonesOfUnknownAreaAreUncallable(t *testing.T) {
	for _, phone := range []string{"+15555550100", "+18005551234"} {
		zones, err := campaign.Zones(phone, "")
		if err != nil {
			t.Fatal(err)
		}
		names := zoneNames(zones)
		if !slices.Contains(names, "Pacific/Guam") || !slices.Contains(names, "America/Adak") {
			t.Fatalf("Zones(%s) = %v, want the NANP's zones", phone, names)
		}
		if next, ok := campaign.NextOpen(campaign.DefaultWindow(), utc(t, "2025-06-02T00:00:00Z"), zones); ok {
			t.Errorf("NextOpen for %s = %v; no default window is open from Guam to Adak at once", phone, next)
		}
	}
}

func TestOpenIn(t *testing.T) {
	anchorage, adak := zone(t, "America/Anchorage"), zone(t, "America/Adak")
	both := []*time.Location{anchorage, adak}
	w := campaign.DefaultWindow()
	tests := []struct {
		name  string
		t     time.Time
		zones []*time.Location
		want  bool
	}{
		// Adak is an hour behind Anchorage.
		{"open in anchorage, early in adak", at(t, anchorage, "2025-06-02 09:30"), both, false},
		{"open in both", at(t, anchorage, "2025-06-02 10:00"), both, true},
		{"late in anchorage", at(t, anchorage, "2025-06-02 20:00"), both, false},
		{"anchorage alone", at(t, anchorage, "2025-06-02 09:30"), both[:1], true},
		{"no zones", at(t, anchorage, "2025-06-02 12:00"), nil, false},
		{"a nil zone", at(t, anchorage, "2025-06-02 12:00"), []*time.Location{anchorage, nil}, false},
	}
	for _, tt := range tests {
		if got := campaign.OpenIn(w, tt.t, tt.zones); got != tt.want {
			t.Errorf("%s: OpenIn(%v) = %v, want %v", tt.name, tt.t, got, tt.want)
		}
	}
	if campaign.OpenIn(campaign.Window{Days: allDays}, at(t, anchorage, "2025-06-02 12:00"), both) {
		t.Error("an invalid window is open")
	}
}

func TestNextOpen(t *testing.T) {
	ny, la, berlin := zone(t, "America/New_York"), zone(t, "America/Los_Angeles"), zone(t, "Europe/Berlin")
	oneHour := campaign.Window{Days: allDays, Start: "09:00", End: "10:00"}
	tests := []struct {
		name   string
		w      campaign.Window
		t      time.Time
		zones  []*time.Location
		want   time.Time
		wantOK bool
	}{
		{"open in both now", campaign.DefaultWindow(), at(t, ny, "2025-06-02 13:00"), []*time.Location{ny, la}, at(t, ny, "2025-06-02 13:00"), true},
		{"waits for the later zone", campaign.DefaultWindow(), at(t, ny, "2025-06-02 07:00"), []*time.Location{ny, la}, at(t, ny, "2025-06-02 12:00"), true},
		{"closes with the earlier zone", campaign.DefaultWindow(), at(t, ny, "2025-06-02 20:00"), []*time.Location{ny, la}, at(t, ny, "2025-06-03 12:00"), true},
		{"one hour three hours apart", oneHour, at(t, ny, "2025-06-02 07:00"), []*time.Location{ny, la}, time.Time{}, false},
		// New York and Berlin are six hours apart: 09:00-20:00 in both is
		// 09:00-14:00 in New York.
		{"across the atlantic", campaign.DefaultWindow(), at(t, ny, "2025-06-02 14:00"), []*time.Location{ny, berlin}, at(t, ny, "2025-06-03 09:00"), true},
		// Between the US change (2025-03-09) and the EU one (2025-03-30) they
		// are five hours apart: 09:00-15:00 in New York.
		{"across the atlantic between changes", campaign.DefaultWindow(), at(t, ny, "2025-03-17 14:30"), []*time.Location{ny, berlin}, at(t, ny, "2025-03-17 14:30"), true},
		{"same zone twice", oneHour, at(t, ny, "2025-06-02 07:00"), []*time.Location{ny, ny}, at(t, ny, "2025-06-02 09:00"), true},
		{"no zones", campaign.DefaultWindow(), at(t, ny, "2025-06-02 07:00"), nil, time.Time{}, false},
		{"invalid window", campaign.Window{Days: allDays, Start: "10:00", End: "09:00"}, at(t, ny, "2025-06-02 07:00"), []*time.Location{ny}, time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := campaign.NextOpen(tt.w, tt.t, tt.zones)
			if ok != tt.wantOK || !got.Equal(tt.want) {
				t.Fatalf("NextOpen = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
