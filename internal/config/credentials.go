package config

import (
	"fmt"
	"regexp"
)

var (
	twilioAccountSID = regexp.MustCompile(`^AC[0-9a-fA-F]{32}$`)
	alphanumeric     = regexp.MustCompile(`^[A-Za-z0-9]+$`)
)

// carrierCredentialErrors refuses carrier credentials that cannot be
// valid, at start, instead of a 502 on the first carrier request: an
// account SID is AC and 32 hex digits, and Twilio refuses an auth token
// with anything but letters and digits (error 21224); a stray quote, space
// or line break from a settings file is the usual cause. The token is
// never repeated in the message.
func (c *Config) carrierCredentialErrors() []error {
	var errs []error
	if c.TwilioAccountSID != "" && !twilioAccountSID.MatchString(c.TwilioAccountSID) {
		errs = append(errs, fmt.Errorf("TWILIO_ACCOUNT_SID must be AC followed by 32 hex digits, as the Twilio console shows it, not %.40q", c.TwilioAccountSID))
	}
	if c.TwilioAuthToken != "" && !alphanumeric.MatchString(c.TwilioAuthToken) {
		errs = append(errs, fmt.Errorf("TWILIO_AUTH_TOKEN must hold only letters and digits (Twilio refuses others, error 21224): check for quotes, spaces or a line break around it"))
	}
	return errs
}
