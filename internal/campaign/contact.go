package campaign

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentline/agentline"
)

// Contact is one person to call, as an upload gives it once validated.
type Contact struct {
	// PhoneNumber is in E.164 form, normalised (no spaces or dashes).
	PhoneNumber string `json:"phone_number"`
	// Timezone is the IANA zone the upload named, or empty: then the
	// number's zones apply (see Zones).
	Timezone  string            `json:"timezone,omitempty"`
	Variables map[string]string `json:"variables,omitempty"`
	// Consent is what the contact agreed to be called on, when given.
	Consent *Consent `json:"consent,omitempty"`
	// Line is where the row was in the upload, counted as RowError.Line
	// counts, so a preview can point at it.
	Line int `json:"line,omitempty"`
}

// Consent records where and when a contact agreed to be called; every
// dial is logged with it.
type Consent = agentline.ContactConsent

// RowError is a row an upload refused and why. Line is the line of the
// file for CSV (the header is line 1; a row whose quoted cell spans lines
// counts from its first), and the 1-based position in the array for JSON.
type RowError struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Upload is a parsed contacts upload.
type Upload struct {
	// Contacts are the valid rows in upload order, each number once.
	Contacts []Contact
	// Duplicates counts the valid rows dropped because their number (once
	// normalised) came earlier in the same upload; the first one wins.
	Duplicates int
	// Errors are the refused rows, in upload order.
	Errors []RowError
}

// Limits on a contact's variables. They bound what one row adds to the
// agent's instructions and to the stored record.
const (
	MaxVariables     = 50
	MaxVariableBytes = 1000
)

// variableName is the shape of a variable's name: what a {{name}}
// placeholder can refer to.
var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// row is one contact as an upload spells it, before validation. problems
// holds what reading it already found wrong (a value of the wrong type,
// an unknown field).
type row struct {
	line          int
	phone         string
	timezone      string
	vars          map[string]string
	hasConsent    bool
	consentSource string
	consentAt     string
	problems      []string
	// broken is set when the row could not be read at all: its problems
	// are all there is to say.
	broken bool
}

// contact validates r. It returns the contact, or the message of a
// RowError naming every problem of the row.
func (r row) contact() (Contact, string) {
	problems := r.problems
	if r.broken {
		return Contact{}, strings.Join(problems, "; ")
	}
	c := Contact{Timezone: strings.TrimSpace(r.timezone), Line: r.line}
	phone, num, err := normalizePhone(r.phone)
	if err != nil {
		problems = append(problems, agentline.ErrorMessage(err))
	}
	c.PhoneNumber = phone
	switch {
	case c.Timezone != "":
		if _, err := Zones(phone, c.Timezone); err != nil {
			problems = append(problems, agentline.ErrorMessage(err))
		}
	case num != nil:
		if _, err := Zones(phone, ""); err != nil {
			problems = append(problems, agentline.ErrorMessage(err))
		}
	}
	problems = append(problems, checkVariables(r.vars)...)
	if len(r.vars) > 0 {
		c.Variables = r.vars
	}
	if r.hasConsent {
		consent, msgs := r.consent()
		c.Consent, problems = consent, append(problems, msgs...)
	}
	if len(problems) > 0 {
		return Contact{}, strings.Join(problems, "; ")
	}
	return c, ""
}

func (r row) consent() (*Consent, []string) {
	var problems []string
	c := &Consent{Source: strings.TrimSpace(r.consentSource)}
	switch {
	case c.Source == "":
		problems = append(problems, "consent source is missing: say where the contact agreed to be called, such as \"web form 2024-05\"")
	case len(c.Source) > MaxVariableBytes:
		problems = append(problems, "consent source is longer than 1000 bytes")
	case !cleanText(c.Source):
		problems = append(problems, "consent source is not UTF-8 text (or holds a NUL byte)")
	}
	if at := strings.TrimSpace(r.consentAt); at != "" {
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			problems = append(problems, "consent at "+quote(at)+" is not an RFC 3339 time, such as 2024-05-01T12:00:00Z")
		}
		c.At = t.UTC()
	}
	return c, problems
}

// checkVariables returns the problems of a row's variables, in name
// order so the message is the same on every upload.
func checkVariables(vars map[string]string) []string {
	var problems []string
	if len(vars) > MaxVariables {
		problems = append(problems, "the row has more than 50 variables")
	}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		value := vars[name]
		switch {
		case !variableName.MatchString(name):
			problems = append(problems, "variable name "+quote(name)+" must be letters, digits and _, start with a letter or _, and have at most 64 characters")
		case len(value) > MaxVariableBytes:
			problems = append(problems, "variable "+name+" is longer than 1000 bytes")
		case !cleanText(value):
			problems = append(problems, "variable "+name+" is not UTF-8 text (or holds a NUL byte); save the file as UTF-8")
		}
	}
	return problems
}

// cleanText reports whether s is UTF-8 without NUL bytes, which
// PostgreSQL's text type refuses.
func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// collector gathers an upload's rows: it bounds their number, validates
// each, and keeps the first of each number.
type collector struct {
	max  int
	rows int
	seen map[string]bool
	up   Upload
}

func newCollector(max int) (*collector, error) {
	if max < 1 {
		return nil, agentline.Errorf(agentline.EInternal, "campaign: the row limit must be positive, got %d", max)
	}
	return &collector{max: max, seen: map[string]bool{}}, nil
}

// count counts one more row, failing once there are more than max.
func (c *collector) count() error {
	c.rows++
	if c.rows > c.max {
		return agentline.Errorf(agentline.ETooLarge, "the upload has more than %d contacts, the most one upload may hold; split it into several", c.max)
	}
	return nil
}

func (c *collector) add(r row) {
	contact, msg := r.contact()
	switch {
	case msg != "":
		c.up.Errors = append(c.up.Errors, RowError{Line: r.line, Message: msg})
	case c.seen[contact.PhoneNumber]:
		c.up.Duplicates++
	default:
		c.seen[contact.PhoneNumber] = true
		c.up.Contacts = append(c.up.Contacts, contact)
	}
}
