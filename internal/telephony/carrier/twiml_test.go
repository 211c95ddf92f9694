package carrier_test

import (
	"maps"
	"testing"

	"github.com/twilio/twilio-go/twiml"

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

// TestStreamTwiMLAsTwimlWritesIt holds the hand-written document to the
// twiml package's for the same stream: the same stream URL and parameters
// when parsed (the twiml package writes attributes in map order and leaves
// control characters raw, so the bytes differ).
func TestStreamTwiMLAsTwimlWritesIt(t *testing.T) {
	params := []carrier.StreamParam{{Name: "call_sid", Value: "CA0123"}, {Name: "stream_ref", Value: `a"b<c&d'e>f`}, {Name: "x", Value: ""}}
	got, err := carrier.StreamTwiML("bot.example.com", 42, params...)
	if err != nil {
		t.Fatal(err)
	}
	inner := make([]twiml.Element, len(params))
	for i, p := range params {
		inner[i] = twiml.VoiceParameter{Name: p.Name, Value: p.Value}
	}
	want, err := twiml.Voice([]twiml.Element{
		twiml.VoiceConnect{InnerElements: []twiml.Element{
			twiml.VoiceStream{Url: carrier.StreamURL("bot.example.com", 42), InnerElements: inner},
		}},
		twiml.VoiceHangup{},
	})
	if err != nil {
		t.Fatal(err)
	}
	gotURL, gotParams := parseStreamTwiML(t, got)
	wantURL, wantParams := parseStreamTwiML(t, want)
	if gotURL != wantURL || !maps.Equal(gotParams, wantParams) || len(gotParams) != len(params) {
		t.Fatalf("StreamTwiML:\n%s\ntwiml package:\n%s", got, want)
	}
	_, ps := parseStreamTwiML(t, mustStreamTwiML(t, carrier.StreamParam{Name: "v", Value: "a\nb\tc"}))
	if ps["v"] != "a\nb\tc" {
		t.Fatalf("control characters: %q", ps["v"])
	}
}

func mustStreamTwiML(t *testing.T, params ...carrier.StreamParam) string {
	t.Helper()
	doc, err := carrier.StreamTwiML("bot.example.com", 1, params...)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
