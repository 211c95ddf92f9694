package campaign_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
)

func TestParseContactsJSON(t *testing.T) {
	manyVars := map[string]string{}
	for i := range campaign.MaxVariables + 1 {
		manyVars[fmt.Sprintf("v%d", i)] = "x"
	}
	many, _ := json.Marshal(manyVars)
	tests := []struct {
		name   string
		in     string
		phones []string
		dups   int
		rows   []wantRow
	}{
		{name: "empty array", in: " [ ] "},
		{name: "plain", in: `[{"phone_number": "+14155550100"}, {"phone_number": "+49 30 123456", "timezone": null, "variables": null, "consent": null}]`,
			phones: []string{"+14155550100", "+4930123456"}},
		{name: "duplicates after normalising", in: `[{"phone_number": "+14155550100"}, {"phone_number": "+1 415-555-0100", "variables": {"a": "b"}}]`,
			phones: []string{"+14155550100"}, dups: 1},
		{name: "lines are positions", in: `[
			{"phone_number": "+14155550100"},
			{"phone_number": 14155550101},
			"+14155550102",
			null,
			{"phone": "+14155550103"},
			{"phone_number": "+14155550104", "timezone": 5},
			{"phone_number": "+14155550105", "variables": ["a"]},
			{"phone_number": "+14155550106", "variables": {"age": 42, "name": null, "ok": "yes"}},
			{"phone_number": "+14155550107", "consent": "yes"},
			{"phone_number": "+14155550108", "consent": {"source": "web", "when": "now"}},
			{"phone_number": "+14155550109", "consent": {"source": "web", "at": "yesterday"}},
			{"phone_number": "+14155550110", "consent": {}},
			{"phone_number": "+14155550111", "variables": {"first name": "Ada"}},
			{"phone_number": "+14155550112", "variables": ` + string(many) + `},
			{"phone_number": "+14155550113", "timezone": "Local"},
			{"phone_number": "+14155550114", "variables": {"note": "` + strings.Repeat("é", 501) + `"}},
			{"phone_number": "+14155550115", "variables": {"note": "a\u0000b"}},
			{"phone_number": "+14155550116", "consent": {"source": "web", "at": "2024-05-01T12:00:00Z"}, "timezone": "America/Denver"}
		]`,
			phones: []string{"+14155550100", "+14155550116"},
			rows: []wantRow{
				{2, `phone_number must be a string such as "+14155550100"`},
				{3, "the contact must be an object"},
				{4, "the contact must be an object"},
				{5, `unknown field "phone"; a contact has phone_number, timezone, variables and consent; phone_number is missing`},
				{6, "timezone must be a string"},
				{7, "variables must be an object"},
				{8, `variable "age" must be a string; variable "name" must be a string`},
				{9, "consent must be an object"},
				{10, `unknown consent field "when"`},
				{11, `consent at "yesterday" is not an RFC 3339 time`},
				{12, "consent source is missing"},
				{13, `variable name "first name" must be letters, digits and _`},
				{14, "more than 50 variables"},
				{15, `timezone "Local" is not a known IANA time zone`},
				{16, "variable note is longer than 1000 bytes"},
				{17, "NUL byte"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, err := campaign.ParseContactsJSON(strings.NewReader(tt.in), 100)
			if err != nil {
				t.Fatal(err)
			}
			checkUpload(t, up, tt.phones, tt.dups, tt.rows)
		})
	}
}

func TestParseContactsJSONFields(t *testing.T) {
	in := `[{"phone_number": " +1 (415) 555-0100 ", "timezone": " America/Chicago ",
		"variables": {"first_name": "Ada", "plan": ""},
		"consent": {"source": " web form ", "at": "2024-05-01T14:00:00+02:00"}}]`
	up, err := campaign.ParseContactsJSON(strings.NewReader(in), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []campaign.Contact{{
		PhoneNumber: "+14155550100", Timezone: "America/Chicago", Line: 1,
		Variables: map[string]string{"first_name": "Ada", "plan": ""},
		Consent:   &campaign.Consent{Source: "web form", At: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)},
	}}
	if !reflect.DeepEqual(up.Contacts, want) {
		t.Fatalf("contacts = %+v\nwant %+v", up.Contacts, want)
	}
	// A contact reads back as the API shows it.
	out, _ := json.Marshal(up.Contacts[0])
	const wantJSON = `{"phone_number":"+14155550100","timezone":"America/Chicago","variables":{"first_name":"Ada","plan":""},"consent":{"source":"web form","at":"2024-05-01T12:00:00Z"},"line":1}`
	if string(out) != wantJSON {
		t.Errorf("JSON = %s\nwant %s", out, wantJSON)
	}
	row, _ := json.Marshal(campaign.RowError{Line: 3, Message: "m"})
	if string(row) != `{"line":3,"message":"m"}` {
		t.Errorf("RowError JSON = %s", row)
	}
}

func TestParseContactsJSONRefused(t *testing.T) {
	tests := []struct {
		name, in, code, msg string
		max                 int
	}{
		{"empty body", "", agentline.EInvalid, "must be a JSON array", 10},
		{"object", `{"phone_number": "+14155550100"}`, agentline.EInvalid, "must be a JSON array", 10},
		{"string", `"+14155550100"`, agentline.EInvalid, "must be a JSON array", 10},
		{"broken element", `[{"phone_number": "+14155550100"}, {"phone_number": ]`, agentline.EInvalid, "not valid JSON at contact 2", 10},
		{"unclosed", `[{"phone_number": "+14155550100"}`, agentline.EInvalid, "not valid JSON", 10},
		{"trailing data", `[{"phone_number": "+14155550100"}] [`, agentline.EInvalid, "one JSON array and nothing after it", 10},
		{"two arrays", `[] []`, agentline.EInvalid, "nothing after it", 10},
		{"too many", `[{"phone_number": "+14155550100"}, {"phone_number": "+14155550101"}, {}]`, agentline.ETooLarge, "more than 2 contacts", 2},
		{"no limit is a bug", `[]`, agentline.EInternal, "", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, err := campaign.ParseContactsJSON(strings.NewReader(tt.in), tt.max)
			checkRefused(t, err, tt.code, tt.msg)
			if len(up.Contacts) != 0 || len(up.Errors) != 0 {
				t.Errorf("a refused upload returned %+v", up)
			}
		})
	}
}

// The limit stops reading: the element after the limit is never decoded,
// so a huge one costs nothing.
func TestParseContactsJSONStopsAtTheLimit(t *testing.T) {
	in := `[{"phone_number": "+14155550100"}, {"phone_number": "` + strings.Repeat("9", 1<<20) + `"}]`
	_, err := campaign.ParseContactsJSON(strings.NewReader(in), 1)
	checkRefused(t, err, agentline.ETooLarge, "more than 1 contacts")
}
