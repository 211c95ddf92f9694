package carrier

import (
	"fmt"

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
// outbound calls use it alike.
func StreamTwiML(botHost string, agentID int64, params ...StreamParam) (string, error) {
	inner := make([]twiml.Element, len(params))
	for i, p := range params {
		inner[i] = twiml.VoiceParameter{Name: p.Name, Value: p.Value}
	}
	return twiml.Voice([]twiml.Element{
		twiml.VoiceConnect{InnerElements: []twiml.Element{
			twiml.VoiceStream{Url: StreamURL(botHost, agentID), InnerElements: inner},
		}},
		twiml.VoiceHangup{},
	})
}

// SayAndHangUp is TwiML that speaks text in the carrier's voice, then
// hangs up: a voicemail left after the beep, an apology.
func SayAndHangUp(text string) (string, error) {
	return twiml.Voice([]twiml.Element{twiml.VoiceSay{Message: text}, twiml.VoiceHangup{}})
}
