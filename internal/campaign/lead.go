package campaign

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentline/agentline"
)

// LeadContact is the contact a form's lead becomes in the campaign its
// form names (speed to lead). phone is the lead's answer in the form's
// phone field, checked as an upload's phone_number is (international
// form, + and the country code, and a number that maps to a time zone,
// since a lead has no timezone column); a number that fails is an
// invalid_request error naming phone_number, and the lead makes no
// contact.
//
// The lead's answers become the contact's variables, so the agent can
// greet the person by the name they typed ({{name}}): text as it is (cut
// to MaxVariableBytes at a character's start), a checkbox "true" or
// "false". Consent is the form the person filled in and when: source
// "form:<channel id>", at the lead's time.
func LeadContact(l agentline.Lead, phone string) (agentline.CampaignContact, error) {
	vars := make(map[string]string, len(l.Answers))
	for name, v := range l.Answers {
		switch v := v.(type) {
		case string:
			vars[name] = cut(v, MaxVariableBytes)
		case bool:
			vars[name] = strconv.FormatBool(v)
		}
	}
	r := row{line: 1, phone: phone, vars: vars, hasConsent: true,
		consentSource: "form:" + strconv.FormatInt(l.ChannelID, 10), consentAt: l.CreatedAt.UTC().Format(time.RFC3339Nano)}
	c, msg := r.contact()
	if msg != "" {
		return agentline.CampaignContact{}, agentline.Invalid("phone_number", "%s", msg)
	}
	return agentline.CampaignContact{PhoneNumber: c.PhoneNumber, Variables: c.Variables, Consent: c.Consent}, nil
}

// cut is s cut to at most n bytes, at the start of a UTF-8 character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
