package carrier

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/twilio/twilio-go/twiml"
)

// StreamParam is one <Parameter> of a <Stream>; the carrier hands them to
// the stream handler in start.customParameters.
type StreamParam struct{ Name, Value string }

// StreamURL is the media stream URL of an agent on this deployment. It has
// no query string: Twilio does not support one there.
func StreamURL(botHost string, agentID int64) string {
	return fmt.Sprintf("wss://%s/api/telephony/stream/%d", botHost, agentID)
}

// StreamTwiML connects a call to the agent's media stream, then hangs up:
// without the <Hangup/>, Twilio would run the next verb when the stream
// closes. Inbound calls (the answer to the carrier's inbound webhook) and
// outbound calls use it alike. Written directly rather than through the
// twiml package, whose reflection was a visible part of every inbound
// call's webhook; the document is the same (TestStreamTwiMLAsTwimlWritesIt).
func StreamTwiML(botHost string, agentID int64, params ...StreamParam) (string, error) {
	var b strings.Builder
	b.Grow(256)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="`)
	attr(&b, StreamURL(botHost, agentID))
	b.WriteString(`">`)
	for _, p := range params {
		b.WriteString(`<Parameter name="`)
		attr(&b, p.Name)
		b.WriteString(`" value="`)
		attr(&b, p.Value)
		b.WriteString(`"/>`)
	}
	b.WriteString(`</Stream></Connect><Hangup/></Response>`)
	return b.String(), nil
}

// attr writes s escaped for a double-quoted XML attribute.
func attr(b *strings.Builder, s string) {
	xml.EscapeText(b, []byte(s)) //nolint:errcheck // a strings.Builder does not fail
}

// SayAndHangUp is TwiML that speaks text in the carrier's voice, then
// hangs up: a voicemail left after the beep, an apology.
func SayAndHangUp(text string) (string, error) {
	return twiml.Voice([]twiml.Element{twiml.VoiceSay{Message: text}, twiml.VoiceHangup{}})
}
