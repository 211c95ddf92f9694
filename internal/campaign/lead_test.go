package campaign_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
)

// A lead becomes a contact: its number normalised, its answers variables
// (long text cut on a character's start, checkboxes as words), consented
// through its form at its time; a number not in international form, or
// mapping to no zone, makes none.
func TestLeadContact(t *testing.T) {
	at := time.Date(2024, 6, 3, 14, 0, 0, 123000000, time.UTC)
	long := strings.Repeat("é", 600) // 1200 bytes
	l := agentline.Lead{ChannelID: 7, CreatedAt: at, Answers: map[string]any{"name": "Ada", "phone": "+1 (415) 555-0100", "news": true, "about": long}}
	c, err := campaign.LeadContact(l, "+1 (415) 555-0100")
	if err != nil {
		t.Fatal(err)
	}
	if c.PhoneNumber != "+14155550100" || c.Variables["name"] != "Ada" || c.Variables["news"] != "true" ||
		len(c.Variables["about"]) != 1000 || c.Consent == nil || c.Consent.Source != "form:7" || !c.Consent.At.Equal(at) || c.Timezone != "" {
		t.Fatalf("contact %+v consent %+v", c, c.Consent)
	}
	for _, phone := range []string{"", "415 555 0100", "+8001234567", "call me"} {
		_, err := campaign.LeadContact(l, phone)
		if agentline.ErrorCode(err) != agentline.EInvalid {
			t.Errorf("%q: %v", phone, err)
		}
	}
}
