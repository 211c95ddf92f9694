package telephony_test

import (
	"testing"

	"github.com/agentline/agentline/internal/telephony/callsim"
)

// parseStreamTwiML checks the shape <Response><Connect><Stream>...
// </Stream></Connect><Hangup/></Response> with the carrier simulator's
// parser and returns the stream URL and parameters.
func parseStreamTwiML(t *testing.T, doc string) (string, map[string]string) {
	t.Helper()
	s, err := callsim.ParseTwiML(doc)
	if err != nil {
		t.Fatalf("TwiML %s: %v", doc, err)
	}
	return s.URL, s.Params
}
