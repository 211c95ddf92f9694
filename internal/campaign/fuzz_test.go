package campaign_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
)

const fuzzMax = 20

var (
	e164       = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// checkParsed holds for every upload, whatever its bytes: an error with a
// code a person can act on, or contacts that are each valid and unique,
// rows in order, and no more of them than the limit.
func checkParsed(t *testing.T, up campaign.Upload, err error, firstLine int) {
	if err != nil {
		if code := agentline.ErrorCode(err); code != agentline.EInvalid && code != agentline.ETooLarge {
			t.Fatalf("error with code %s: %v", code, err)
		}
		return
	}
	if n := len(up.Contacts) + up.Duplicates + len(up.Errors); n > fuzzMax {
		t.Fatalf("%d rows passed a limit of %d", n, fuzzMax)
	}
	seen := map[string]bool{}
	last := 0
	for _, c := range up.Contacts {
		if !e164.MatchString(c.PhoneNumber) || seen[c.PhoneNumber] {
			t.Fatalf("contact number %q is malformed or repeated", c.PhoneNumber)
		}
		seen[c.PhoneNumber] = true
		if _, err := campaign.Zones(c.PhoneNumber, c.Timezone); err != nil {
			t.Fatalf("contact %+v has no zones: %v", c, err)
		}
		if len(c.Variables) > campaign.MaxVariables {
			t.Fatalf("contact has %d variables", len(c.Variables))
		}
		for name, value := range c.Variables {
			if !identifier.MatchString(name) || len(value) > campaign.MaxVariableBytes || !utf8.ValidString(value) || strings.ContainsRune(value, 0) {
				t.Fatalf("variable %q = %q passed", name, value)
			}
		}
		if c.Line < firstLine || c.Line <= last {
			t.Fatalf("contact line %d after %d", c.Line, last)
		}
		last = c.Line
	}
	last = 0
	for _, e := range up.Errors {
		if e.Line < firstLine || e.Line <= last || e.Message == "" {
			t.Fatalf("row error %+v after line %d", e, last)
		}
		last = e.Line
	}
}

func FuzzParseContactsCSV(f *testing.F) {
	for _, seed := range []string{
		"phone_number,first_name\n+14155550100,Ada\n+4930123456,Bernd\n",
		"\ufeffphone_number,timezone,consent_source,consent_at\r\n+14155550100,America/Chicago,web,2024-05-01T12:00:00Z\r\n\r\n",
		"phone_number,note\n+14155550100,\"two\nlines, \"\"quoted\"\"\"\n+1 (415) 555-0100,dup\n",
		"phone_number,a,b\n+14155550100,1\n,,\n+882123456789,x,y\nxyz,1,2\n",
		"Phone_Number , x\n+6834002,\xe9\n",
		"phone,name\n+14155550100,Ada\n",
		"phone_number\n+14155550100,\"unclosed\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		up, err := campaign.ParseContactsCSV(bytes.NewReader(data), fuzzMax)
		checkParsed(t, up, err, 2)
	})
}

func FuzzParseContactsJSON(f *testing.F) {
	for _, seed := range []string{
		`[{"phone_number": "+14155550100", "variables": {"first_name": "Ada"}}]`,
		`[{"phone_number": "+1 415 555 0100", "timezone": "Europe/Berlin", "consent": {"source": "web", "at": "2024-05-01T12:00:00Z"}}, {"phone_number": "+14155550100"}]`,
		`[null, 1, "x", {"phone": "+1"}, {"phone_number": 1}, {"variables": {"a": 1}}]`,
		`[] []`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		up, err := campaign.ParseContactsJSON(bytes.NewReader(data), fuzzMax)
		checkParsed(t, up, err, 1)
	})
}
