package campaign_test

import (
	"slices"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
)

func TestFill(t *testing.T) {
	vars := map[string]string{"first_name": "Ada", "plan": "Pro", "empty": "", "loop": "{{first_name}}", "money": "$1 ${plan} \\1"}
	tests := []struct {
		name, text, want string
		vars             map[string]string
	}{
		{"one", "Hello {{first_name}}!", "Hello Ada!", vars},
		{"spaces inside braces", "Hello {{ first_name }} on {{\tplan  }}.", "Hello Ada on Pro.", vars},
		{"twice", "{{plan}}/{{plan}}", "Pro/Pro", vars},
		{"unknown left as written", "Hello {{ frist_name }}, {{plan}}", "Hello {{ frist_name }}, Pro", vars},
		{"empty value", "[{{empty}}]", "[]", vars},
		{"no recursive expansion", "{{loop}}", "{{first_name}}", vars},
		{"values are literal", "{{money}}", "$1 ${plan} \\1", vars},
		{"case matters", "{{First_Name}}", "{{First_Name}}", vars},
		{"not a name", "{{first name}} {{1st}} {{}} {first_name} {{first_name}", "{{first name}} {{1st}} {{}} {first_name} {{first_name}", vars},
		{"newline inside braces is no placeholder", "{{\nplan}}", "{{\nplan}}", vars},
		{"triple braces", "{{{plan}}}", "{Pro}", vars},
		{"no variables", "Hello {{first_name}}", "Hello {{first_name}}", nil},
		{"no placeholders", "Hello", "Hello", vars},
		{"unicode around", "¡Hola {{first_name}}! 👋", "¡Hola Ada! 👋", vars},
	}
	for _, tt := range tests {
		if got := campaign.Fill(tt.text, tt.vars); got != tt.want {
			t.Errorf("%s: Fill(%q) = %q, want %q", tt.name, tt.text, got, tt.want)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Hello {{ first_name }}, your {{plan}} renews; {{first_name}}!", []string{"first_name", "plan"}},
		{"{{first name}} {{}} {x}", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := campaign.Placeholders(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Placeholders(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		msg  string // of the error, when one is expected
	}{
		{"", time.Hour, ""},
		{"1h", time.Hour, ""},
		{"1s", time.Second, ""},
		{"90s", 90 * time.Second, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"1.5s", 1500 * time.Millisecond, ""},
		{"720h", 30 * 24 * time.Hour, ""},
		{"999ms", 0, `at least "1s"; got "999ms"`},
		{"0", 0, "at least"},
		{"-1h", 0, "at least"},
		{"721h", 0, `at most "720h" (30 days); got "721h"`},
		{"2d", 0, `must be a duration such as "90s", "30m" or "1h30m" (units s, m, h; for days use hours, "48h"); got "2d"`},
		{"1 h", 0, "must be a duration"},
		{"3600", 0, "must be a duration"},
		{" 1h", 0, "must be a duration"},
	}
	for _, tt := range tests {
		got, err := campaign.ParseRetryAfter(tt.in)
		if tt.msg == "" {
			if err != nil || got != tt.want {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			continue
		}
		checkRefused(t, err, agentline.EInvalid, tt.msg)
		if e := err.(*agentline.Error); e.Field != "retry_after" {
			t.Errorf("ParseRetryAfter(%q) names field %q", tt.in, e.Field)
		}
	}
}

// retry_after is answered as a client would write it, and reads back as
// the same duration.
func TestFormatRetryAfter(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", time.Second: "1s",
		48 * time.Hour: "48h", time.Hour + 5*time.Second: "1h0m5s", 1500 * time.Millisecond: "1.5s",
	} {
		got := campaign.FormatRetryAfter(d)
		back, err := campaign.ParseRetryAfter(got)
		if got != want || err != nil || back != d {
			t.Errorf("FormatRetryAfter(%v) = %q (reads back as %v, %v), want %q", d, got, back, err, want)
		}
	}
}
