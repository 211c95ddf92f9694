package twiliofake

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A played call whose TwiML is replaced (a POST to the call with Twiml) runs
// the new TwiML as Twilio does: its media stream ends at once (Play's
// Answer sees its ctx end), the new document's <Say> verbs are spoken (the
// fake records their text in Call.Said and takes SayTime per verb), and
// the call ends completed unless the document goes on to a <Dial> or a new
// <Connect>, which the fake does not play (the call then stays in progress
// until it is hung up).

// SayTime is how long the fake takes to speak one <Say> of a redirected
// call.
const SayTime = 300 * time.Millisecond

// twimlVerbs are the verbs of a TwiML document, in order.
type twimlVerbs struct {
	Verbs []struct {
		XMLName xml.Name
		Text    string `xml:",chardata"`
	} `xml:",any"`
}

// redirect records a new TwiML on a played call (f.mu held) and ends its
// stream, once.
func (f *Fake) redirect(c *Call, twiml string) {
	c.Twiml = twiml
	if c.redirected != nil && !c.wasRedirected {
		c.wasRedirected = true
		close(c.redirected)
	}
}

// runRedirect speaks the <Say> verbs of the call's new TwiML and reports
// whether the document then ends the call (<Hangup/>, or nothing more).
func (f *Fake) runRedirect(sid string, ended <-chan struct{}) bool {
	f.mu.Lock()
	doc := f.callByID(sid).Twiml
	f.mu.Unlock()
	var v twimlVerbs
	if err := xml.Unmarshal([]byte(doc), &v); err != nil {
		return true
	}
	for _, verb := range v.Verbs {
		switch verb.XMLName.Local {
		case "Say":
			f.mu.Lock()
			c := f.callByID(sid)
			c.Said = append(c.Said, strings.TrimSpace(verb.Text))
			f.mu.Unlock()
			if !f.pause(SayTime, ended) {
				return false
			}
		case "Hangup":
			return true
		case "Dial", "Connect":
			return false
		}
	}
	return true
}

// listCalls answers GET .../Calls.json: the calls placed, newest first,
// filtered by To and From, PageSize of them (50 by default, as Twilio).
func (f *Fake) listCalls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := strconv.Atoi(q.Get("PageSize"))
	if err != nil || size <= 0 || size > 1000 {
		size = 50
	}
	f.mu.Lock()
	out := []map[string]any{}
	for _, c := range slices.Backward(f.calls) {
		if len(out) == size {
			break
		}
		if (q.Get("To") == "" || c.To == q.Get("To")) && (q.Get("From") == "" || c.From == q.Get("From")) {
			out = append(out, f.callJSON(c))
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"calls": out, "next_page_uri": nil, "page": 0, "page_size": size,
		"uri": r.URL.RequestURI()})
}
