package twiliofake

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Pickup is who or what a played call reaches.
type Pickup string

// The pickups a played call can meet.
const (
	// PickupPerson is a person, who answers after the ring; machine
	// detection says human.
	PickupPerson Pickup = "person"
	// PickupMachine is an answering machine: it answers after the ring,
	// plays a greeting of MachineGreeting and a beep of MachineBeep, then
	// records. Machine detection says machine_start, or machine_end_beep
	// after the beep when DetectMessageEnd was asked.
	PickupMachine Pickup = "machine"
	// PickupBusy is a busy line: the call ends busy without ringing.
	PickupBusy Pickup = "busy"
	// PickupNoAnswer rings until Play.NoAnswer and ends no-answer.
	PickupNoAnswer Pickup = "no-answer"
)

// ByLastDigit is the sandbox's rule, Play's default: a number ending in 7
// reaches an answering machine, in 8 a busy line, in 9 a phone nobody
// answers, and any other a person.
func ByLastDigit(to string) Pickup {
	switch {
	case strings.HasSuffix(to, "7"):
		return PickupMachine
	case strings.HasSuffix(to, "8"):
		return PickupBusy
	case strings.HasSuffix(to, "9"):
		return PickupNoAnswer
	}
	return PickupPerson
}

// How the fake's answering machine sounds: a greeting, then a beep. A
// machine callee (callsim.Machine) plays them; the fake times its
// DetectMessageEnd verdict by them.
const (
	MachineGreeting = 3 * time.Second
	MachineBeep     = 500 * time.Millisecond
)

// How long machine detection takes to decide, from the answer: a person's
// short hello has ended; a machine has spoken longer than Twilio's default
// MachineDetectionSpeechThreshold (2400 ms); or, asked to wait for the end
// of the message, the beep has played.
const (
	humanAfter        = 1500 * time.Millisecond
	machineStartAfter = 2400 * time.Millisecond
	messageEndAfter   = MachineGreeting + MachineBeep
)

// busyAfter is how long a busy line takes to answer busy; noAnswerAfter
// is Play.NoAnswer's default, far shorter than Twilio's 60 s Timeout so
// that the sandbox's callers need not wait.
const (
	busyAfter     = 500 * time.Millisecond
	noAnswerAfter = 3 * time.Second
)

// verdict is what machine detection in mode says of pickup, and when.
func verdict(pickup Pickup, mode string) (answeredBy string, after time.Duration) {
	switch {
	case pickup != PickupMachine:
		return "human", humanAfter
	case mode == "DetectMessageEnd":
		return "machine_end_beep", messageEndAfter
	}
	return "machine_start", machineStartAfter
}

// validAMD reports whether the machine detection parameters of a new call
// are ones Twilio takes.
func validAMD(form url.Values) bool {
	mode, async, method := form.Get("MachineDetection"), form.Get("AsyncAmd"), form.Get("AsyncAmdStatusCallbackMethod")
	cb := form.Get("AsyncAmdStatusCallback")
	return (mode == "" || mode == "Enable" || mode == "DetectMessageEnd") &&
		(async == "" || async == "true" || async == "false") &&
		(method == "" || method == "GET" || method == "POST") &&
		(cb == "" || validURL(cb))
}

// detect gives the verdict of the answered call's machine detection, if
// it asked for one, in the background as with AsyncAmd: the call goes on
// meanwhile. The verdict is put on the call (answered_by) and, when the
// call asked for it, POSTed signed to AsyncAmdStatusCallback with
// AccountSid, CallSid, AnsweredBy and MachineDetectionDuration (ms). A
// call that ends before the verdict gets none. Without AsyncAmd, Twilio
// would hold the call's TwiML until the verdict; the fake does not.
func (f *Fake) detect(sid string, ended <-chan struct{}) {
	f.mu.Lock()
	c := f.callByID(sid)
	mode, pickup := c.MachineDetection, c.Pickup
	f.mu.Unlock()
	if mode == "" {
		return
	}
	answeredBy, after := verdict(pickup, mode)
	f.playing.Add(1)
	go func() {
		defer f.playing.Done()
		if !f.pause(after, ended) {
			return
		}
		f.mu.Lock()
		c.AnsweredBy = answeredBy
		target := c.AsyncAmdStatusCallback
		post := c.AsyncAmd == "true" && target != "" && c.AsyncAmdStatusCallbackMethod == "POST"
		form := url.Values{"AccountSid": {f.accountSID}, "CallSid": {c.SID}, "AnsweredBy": {answeredBy},
			"MachineDetectionDuration": {strconv.Itoa(int(after / time.Millisecond))}}
		if post {
			c.AMDCallbacks = append(c.AMDCallbacks, form)
		}
		f.mu.Unlock()
		if post {
			f.post(target, form)
		}
	}()
}
