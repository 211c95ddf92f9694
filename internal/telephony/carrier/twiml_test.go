package carrier_test

import (
	"testing"

	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/carrier"
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

func TestStreamTwiML(t *testing.T) {
	doc, err := carrier.StreamTwiML("bot.example.com", 42, carrier.StreamParam{Name: "direction", Value: "outbound"}, carrier.StreamParam{Name: "stream_ref", Value: `a"b<c`})
	if err != nil {
		t.Fatal(err)
	}
	url, params := parseStreamTwiML(t, doc)
	if url != "wss://bot.example.com/api/telephony/stream/42" || params["direction"] != "outbound" || params["stream_ref"] != `a"b<c` || len(params) != 2 {
		t.Fatalf("url %q params %v in %s", url, params, doc)
	}
}
