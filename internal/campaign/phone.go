package campaign

import (
	"regexp"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/agentline/agentline"
)

// e164Shape is + and 7 to 15 digits, the first not 0. E.164 allows 15
// digits at most; the shortest numbers in use (Niue, Saint Helena) have 7
// with their country code. phonenumbers then checks the length the
// number's country uses.
var e164Shape = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// normalizePhone checks s is a phone number in international form and
// returns it in E.164 form. Spaces, dashes, dots and parentheses are
// dropped first, so "+1 (415) 555-0100" is +14155550100.
//
// It asks phonenumbers whether the number is possible (a length its
// country uses), not whether it is valid (in a range its numbering plan
// has assigned): the library's copy of the plans lags new ranges, and it
// refuses the reserved 555-01xx numbers tests and the sandbox use. The
// carrier is the authority on whether a number exists; a number that
// does not fails its call and is recorded so. A number possible only for
// local dialling (a US number without its area code) is refused.
func normalizePhone(s string) (string, *phonenumbers.PhoneNumber, error) {
	digits := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" -.()", r) {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	switch {
	case digits == "":
		return "", nil, agentline.Invalid("phone_number", "phone_number is missing")
	case !e164Shape.MatchString(digits):
		return "", nil, agentline.Invalid("phone_number", "phone_number %s is not in E.164 form: + then the country code and number, 7 to 15 digits, such as +14155550100", quote(s))
	}
	num, err := phonenumbers.Parse(digits, "")
	if err != nil {
		return "", nil, agentline.Invalid("phone_number", "phone_number %s has no known country code", quote(s))
	}
	switch phonenumbers.IsPossibleNumberWithReason(num) {
	case phonenumbers.IS_POSSIBLE:
		return phonenumbers.Format(num, phonenumbers.E164), num, nil
	case phonenumbers.TOO_SHORT, phonenumbers.IS_POSSIBLE_LOCAL_ONLY:
		return "", nil, agentline.Invalid("phone_number", "phone_number %s is too short for its country", quote(s))
	case phonenumbers.TOO_LONG:
		return "", nil, agentline.Invalid("phone_number", "phone_number %s is too long for its country", quote(s))
	case phonenumbers.INVALID_COUNTRY_CODE:
		return "", nil, agentline.Invalid("phone_number", "phone_number %s has no known country code", quote(s))
	}
	return "", nil, agentline.Invalid("phone_number", "phone_number %s has a length no number of its country has", quote(s))
}
