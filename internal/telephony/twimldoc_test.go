package telephony_test

import (
	"encoding/xml"
	"testing"
)

// streamDoc is a parsed StreamTwiML document.
type streamDoc struct {
	XMLName xml.Name `xml:"Response"`
	Verbs   []struct {
		XMLName xml.Name
		Stream  struct {
			URL    string `xml:"url,attr"`
			Params []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"Parameter"`
		} `xml:"Stream"`
	} `xml:",any"`
}

// parseStreamTwiML checks the shape <Response><Connect><Stream>...
// </Stream></Connect><Hangup/></Response> and returns the stream URL and
// parameters.
func parseStreamTwiML(t *testing.T, doc string) (string, map[string]string) {
	t.Helper()
	var d streamDoc
	if err := xml.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("TwiML %s: %v", doc, err)
	}
	if len(d.Verbs) != 2 || d.Verbs[0].XMLName.Local != "Connect" || d.Verbs[1].XMLName.Local != "Hangup" {
		t.Fatalf("TwiML verbs are not Connect, Hangup: %s", doc)
	}
	params := map[string]string{}
	for _, p := range d.Verbs[0].Stream.Params {
		params[p.Name] = p.Value
	}
	return d.Verbs[0].Stream.URL, params
}
