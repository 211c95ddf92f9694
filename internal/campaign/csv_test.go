package campaign_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
)

// wantRow is a RowError expected at line, with msg in its message.
type wantRow struct {
	line int
	msg  string
}

// checkUpload compares an upload with the numbers, duplicates and row
// errors expected.
func checkUpload(t *testing.T, up campaign.Upload, phones []string, dups int, rows []wantRow) {
	t.Helper()
	var got []string
	for _, c := range up.Contacts {
		got = append(got, c.PhoneNumber)
	}
	if !reflect.DeepEqual(got, phones) {
		t.Errorf("contacts = %v, want %v", got, phones)
	}
	if up.Duplicates != dups {
		t.Errorf("duplicates = %d, want %d", up.Duplicates, dups)
	}
	if len(up.Errors) != len(rows) {
		t.Fatalf("row errors = %+v, want %d: %+v", up.Errors, len(rows), rows)
	}
	for i, w := range rows {
		if e := up.Errors[i]; e.Line != w.line || !strings.Contains(e.Message, w.msg) {
			t.Errorf("row error %d = %+v, want line %d saying %q", i, e, w.line, w.msg)
		}
	}
}

// checkRefused checks err is an error of code whose message says msg.
func checkRefused(t *testing.T, err error, code, msg string) {
	t.Helper()
	var e *agentline.Error
	if !errors.As(err, &e) || e.Code != code || !strings.Contains(e.Message, msg) {
		t.Fatalf("error = %v, want %s saying %q", err, code, msg)
	}
}

func TestParseContactsCSV(t *testing.T) {
	long := strings.Repeat("x", 1001)
	tests := []struct {
		name   string
		in     string
		phones []string
		dups   int
		rows   []wantRow
	}{
		{name: "plain", in: "phone_number,first_name\n+14155550100,Ada\n+4930123456,Bernd\n",
			phones: []string{"+14155550100", "+4930123456"}},
		{name: "header only", in: "phone_number,first_name\n"},
		{name: "bom, crlf and trailing blank lines", in: "\ufeffphone_number,first_name\r\n+14155550100,Ada\r\n\r\n,\r\n ,  \r\n\r\n",
			phones: []string{"+14155550100"}},
		{name: "no final newline", in: "phone_number\n+14155550100", phones: []string{"+14155550100"}},
		{name: "reserved columns in any case and order", in: " Timezone ,First_Name,PHONE_NUMBER\nEurope/Berlin,Ada,+14155550100\n",
			phones: []string{"+14155550100"}},
		{name: "formatted number normalised, then a duplicate", in: "phone_number\n+1 (415) 555-0100\n+14155550100\n+1.415.555.0100\n",
			phones: []string{"+14155550100"}, dups: 2},
		{name: "national prefix dropped", in: "phone_number\n+44 (0)20 7946 0000\n+442079460000\n",
			phones: []string{"+442079460000"}, dups: 1},
		{name: "bad rows kept apart", in: "phone_number,timezone,name\n" +
			"4155550100,,a\n" + // line 2: no +
			"+1415555,,b\n" + // line 3: too short
			"+14155550100,Mars/Base,c\n" + // line 4: unknown zone
			"+999123456789,,d\n" + // line 5: no such country code
			"+14155550101,,e\n" + // line 6: good
			",,f\n" + // line 7: no number
			"+882123456789,,g\n" + // line 8: no zone known
			"+882123456789,Europe/Zurich,h\n" + // line 9: good with a zone
			"+14155550102,too,many,cells\n", // line 10
			phones: []string{"+14155550101", "+882123456789"},
			rows: []wantRow{
				{2, "not in E.164 form"}, {3, "too short for its country"}, {4, `timezone "Mars/Base" is not a known IANA time zone`},
				{5, "no known country code"}, {7, "phone_number is missing"}, {8, "give the contact a timezone"},
				{10, "the row has 4 cells and the header 3"},
			}},
		{name: "local-only number refused", in: "phone_number\n+12345678\n", rows: []wantRow{{2, "too short"}}},
		{name: "too long", in: "phone_number\n+141555501001\n", rows: []wantRow{{2, "too long"}}},
		{name: "fictional 555 number is possible", in: "phone_number,timezone\n+15555550100,America/Chicago\n", phones: []string{"+15555550100"}},
		{name: "niue has seven digits", in: "phone_number\n+6834002\n", phones: []string{"+6834002"}},
		{name: "extension refused", in: "phone_number\n+14155550100x12\n", rows: []wantRow{{2, "not in E.164 form"}}},
		{name: "line numbers follow quoted line breaks", in: "phone_number,note\n+14155550100,\"two\nlines\"\nbad,x\n",
			phones: []string{"+14155550100"}, rows: []wantRow{{4, "E.164"}}},
		{name: "duplicate of a bad row is not a duplicate", in: "phone_number,timezone\n+14155550100,Nowhere\n+14155550100,\n",
			phones: []string{"+14155550100"}, rows: []wantRow{{2, "Nowhere"}}},
		{name: "all problems of a row in one message", in: "phone_number,timezone\nxyz,Nowhere\n",
			rows: []wantRow{{2, `E.164 form: + then the country code and number, 7 to 15 digits, such as +14155550100; timezone "Nowhere"`}}},
		{name: "value too long", in: "phone_number,note\n+14155550100," + long + "\n", rows: []wantRow{{2, "variable note is longer than 1000 bytes"}}},
		{name: "value of 1000 bytes", in: "phone_number,note\n+14155550100," + long[1:] + "\n", phones: []string{"+14155550100"}},
		{name: "latin-1 value", in: "phone_number,name\n+14155550100,Jos\xe9\n", rows: []wantRow{{2, "not UTF-8 text"}}},
		{name: "nul in value", in: "phone_number,name\n+14155550100,a\x00b\n", rows: []wantRow{{2, "NUL"}}},
		{name: "consent", in: "phone_number,consent_source,consent_at\n+14155550100,web form,2024-05-01T14:00:00+02:00\n+14155550101,,\n",
			phones: []string{"+14155550100", "+14155550101"}},
		{name: "consent time without source", in: "phone_number,consent_source,consent_at\n+14155550100,,2024-05-01T12:00:00Z\n",
			rows: []wantRow{{2, "consent source is missing"}}},
		{name: "consent time not rfc 3339", in: "phone_number,consent_source,consent_at\n+14155550100,web,01/05/2024\n",
			rows: []wantRow{{2, `consent at "01/05/2024" is not an RFC 3339 time`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, err := campaign.ParseContactsCSV(strings.NewReader(tt.in), 100)
			if err != nil {
				t.Fatal(err)
			}
			checkUpload(t, up, tt.phones, tt.dups, tt.rows)
		})
	}
}

func TestParseContactsCSVFields(t *testing.T) {
	in := "phone_number,timezone,first_name,consent_source,consent_at,Empty\n" +
		"+1 415 555 0100, America/Chicago , Ada ,web form,2024-05-01T14:00:00+02:00,\n" +
		"+4930123456,,Bernd,,,\n"
	up, err := campaign.ParseContactsCSV(strings.NewReader(in), 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []campaign.Contact{
		{PhoneNumber: "+14155550100", Timezone: "America/Chicago", Line: 2,
			Variables: map[string]string{"first_name": " Ada ", "Empty": ""},
			Consent:   &campaign.Consent{Source: "web form", At: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}},
		{PhoneNumber: "+4930123456", Line: 3, Variables: map[string]string{"first_name": "Bernd", "Empty": ""}},
	}
	if !reflect.DeepEqual(up.Contacts, want) {
		t.Errorf("contacts = %+v\nwant %+v", up.Contacts, want)
	}
}

func TestParseContactsCSVRefused(t *testing.T) {
	manyColumns := "phone_number"
	for i := range campaign.MaxVariables + 1 {
		manyColumns += fmt.Sprintf(",v%d", i)
	}
	tests := []struct {
		name, in, code, msg string
		max                 int
	}{
		{"empty", "", agentline.EInvalid, "the CSV file is empty", 10},
		{"only a bom", "\ufeff", agentline.EInvalid, "the CSV file is empty", 10},
		{"only blank lines", "\n\n\n", agentline.EInvalid, "the CSV file is empty", 10},
		{"header without phone_number", "phone,name\n+14155550100,Ada\n", agentline.EInvalid, `no phone_number column; its first line must name the columns, such as phone_number,first_name (found "phone,name")`, 10},
		{"no header at all", "+14155550100\n+14155550101\n", agentline.EInvalid, "no phone_number column", 10},
		{"column twice", "phone_number,name,Name\n", agentline.EInvalid, `column "Name" more than once`, 10},
		{"phone_number twice", "phone_number,Phone_Number\n", agentline.EInvalid, "more than once", 10},
		{"unnamed column", "phone_number,,name\n", agentline.EInvalid, "column 2 of the CSV header has no name", 10},
		{"column that is no variable name", "phone_number,first name\n", agentline.EInvalid, `CSV column "first name" cannot be a variable`, 10},
		{"latin-1 header", "phone_number,n\xe9\n", agentline.EInvalid, "not UTF-8", 10},
		{"too many variable columns", manyColumns + "\n", agentline.EInvalid, "51 variable columns; a contact has at most 50", 10},
		{"utf-16", "\xff\xfep\x00h\x00", agentline.EInvalid, "UTF-16", 10},
		{"bare quote", "phone_number,name\n+14155550100,Ada\n+14155550101,Ad\"a\n", agentline.EInvalid, "cannot be read at line 3", 10},
		{"unclosed quote", "phone_number,name\n+14155550100,\"Ada\n", agentline.EInvalid, "cannot be read at line", 10},
		{"too many rows", "phone_number\n+14155550100\n+14155550101\n+14155550102\n", agentline.ETooLarge, "more than 2 contacts", 2},
		{"bad rows count too", "phone_number\nx\ny\nz\n", agentline.ETooLarge, "more than 2 contacts", 2},
		{"no limit is a bug", "phone_number\n", agentline.EInternal, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, err := campaign.ParseContactsCSV(strings.NewReader(tt.in), tt.max)
			checkRefused(t, err, tt.code, tt.msg)
			if len(up.Contacts) != 0 || len(up.Errors) != 0 {
				t.Errorf("a refused upload returned %+v", up)
			}
		})
	}
}

// Exactly max rows pass, blank rows not counted.
func TestParseContactsCSVAtTheLimit(t *testing.T) {
	in := "phone_number\n+14155550100\n\n,\n+14155550101\n\n"
	up, err := campaign.ParseContactsCSV(strings.NewReader(in), 2)
	if err != nil {
		t.Fatal(err)
	}
	checkUpload(t, up, []string{"+14155550100", "+14155550101"}, 0, nil)
}
