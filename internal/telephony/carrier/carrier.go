// Package carrier speaks the telephony carrier's protocol (Twilio): its
// REST API behind the small Carrier interface, the signatures on its
// webhooks, and the TwiML that connects a call to a media stream. It is
// apart so that number and call management and the live call path, which
// both talk to the carrier, share one client and one set of checks without
// importing each other.
package carrier

import (
	"context"
	"errors"
	"regexp"
	"time"
)

// Carrier is what the phone channel needs from the telephony carrier. Twilio
// implements it; tests point Twilio at twiliofake on loopback. Every error
// a Carrier returns is an *agentline.Error with code carrier_error whose
// message is safe to show, except ErrNumberGone and ErrCallGone.
type Carrier interface {
	// AvailableNumbers searches US local numbers, optionally in one area code.
	AvailableNumbers(ctx context.Context, areaCode string) ([]AvailableNumber, error)
	// BuyNumber purchases a number and returns the carrier's SID for it.
	BuyNumber(ctx context.Context, req BuyRequest) (sid string, err error)
	// FindNumber returns the carrier's SID of a number the account owns;
	// ErrNumberGone when it owns no such number.
	FindNumber(ctx context.Context, phoneNumber string) (sid string, err error)
	// ReleaseNumber gives a number back; ErrNumberGone when the carrier
	// does not know it (any more).
	ReleaseNumber(ctx context.Context, sid string) error
	// CreateCall places an outbound call.
	CreateCall(ctx context.Context, req CallRequest) (CarrierCall, error)
	// HangUp ends a call and returns its status afterwards; ErrCallGone
	// when the carrier does not know the call (any more).
	HangUp(ctx context.Context, callSID string) (status string, err error)
	// CallStatus returns a call's status at the carrier (queued, ringing,
	// in-progress, completed, ...); ErrCallGone when it does not know the call.
	CallStatus(ctx context.Context, callSID string) (string, error)
	// FetchCall returns a call's status, and its duration and end once it
	// has ended; ErrCallGone when the carrier does not know the call.
	FetchCall(ctx context.Context, callSID string) (CallState, error)
	// Redirect replaces a live call's TwiML (a transfer's <Dial>, an
	// apology before hanging up); ErrCallGone when the call has ended.
	Redirect(ctx context.Context, callSID, twiml string) error
	// FindCalls lists the calls the carrier placed from from to to that
	// it created at or after after, newest first: the calls a request
	// whose answer was lost may have made, found by what we asked for
	// since we never heard their SIDs.
	FindCalls(ctx context.Context, from, to string, after time.Time) ([]FoundCall, error)
}

// FoundCall is a call FindCalls found: its SID and state, and when the
// carrier created it.
type FoundCall struct {
	SID     string
	Created time.Time
	CallState
}

// ErrNumberGone is returned by ReleaseNumber for a number the carrier no
// longer has: releasing it again has nothing left to do.
var ErrNumberGone = errors.New("the carrier no longer has this number")

// ErrNoAnswer is wrapped in a carrier_error whose request got no answer (a
// timeout, a broken connection): the carrier may or may not have done what
// it was asked.
var ErrNoAnswer = errors.New("no answer from the carrier")

// ErrCallGone is returned by HangUp for a call the carrier does not know:
// whatever our record says, that call is over.
var ErrCallGone = errors.New("the carrier has no such call")

// AvailableNumber is one number a project could buy.
type AvailableNumber struct {
	PhoneNumber  string       `json:"phone_number"`
	FriendlyName string       `json:"friendly_name"`
	Locality     string       `json:"locality"`
	Region       string       `json:"region"`
	PostalCode   string       `json:"postal_code"`
	Capabilities Capabilities `json:"capabilities"`
}

// Capabilities say what a number can do.
type Capabilities struct {
	Voice bool `json:"voice"`
	SMS   bool `json:"sms"`
	MMS   bool `json:"mms"`
}

// BuyRequest is a number purchase with the webhooks the carrier calls.
type BuyRequest struct {
	PhoneNumber       string
	FriendlyName      string
	VoiceURL          string // POSTed when the number is called
	StatusCallbackURL string // POSTed with call status changes
}

// CallRequest is an outbound call running inline TwiML.
type CallRequest struct {
	To, From          string
	TwiML             string
	StatusCallbackURL string
	// MachineDetection, when set, asks the carrier who answers the call;
	// nil asks nothing.
	MachineDetection *MachineDetection
}

// MachineDetection asks the carrier to tell a person from an answering
// machine once the call is answered. It runs in the background (Twilio's
// AsyncAmd): the call's TwiML runs at once, so a person hears no silence
// while the carrier listens, and the verdict (agentline.AnsweredBy...)
// comes later in a signed form POST to CallbackURL, with CallSid,
// AnsweredBy and MachineDetectionDuration.
type MachineDetection struct {
	// Mode is AMDEnable or AMDDetectMessageEnd.
	Mode string
	// CallbackURL is where the verdict is POSTed.
	CallbackURL string
}

// Modes of machine detection, as Twilio names them.
const (
	// AMDEnable gives the verdict as soon as the carrier knows: to hang up
	// on machines.
	AMDEnable = "Enable"
	// AMDDetectMessageEnd gives a machine's verdict only once its greeting
	// has ended (usually at the beep): to leave a message.
	AMDDetectMessageEnd = "DetectMessageEnd"
)

// ValidAMDMode reports whether mode is a machine detection mode.
func ValidAMDMode(mode string) bool { return mode == AMDEnable || mode == AMDDetectMessageEnd }

// CarrierCall is the carrier's answer to a new call.
type CarrierCall struct {
	SID    string
	Status string
}

// callSIDPattern is the shape of a carrier call SID (CA and 32 hex digits
// at Twilio), loosely: letters and digits, so a placeholder never matches.
var callSIDPattern = regexp.MustCompile(`^[A-Za-z0-9]{2,64}$`)

// CallState is what the carrier knows of a call.
type CallState struct {
	Status    string
	DurationS *int      // once the call has ended
	EndedAt   time.Time // zero until the call has ended
	// AnsweredBy is machine detection's verdict, when the call asked for
	// it and the carrier has given it ("" otherwise).
	AnsweredBy string
}

// ValidCallSID reports whether s can be a carrier call SID: ids that cannot
// are refused before they reach the store or the carrier.
func ValidCallSID(s string) bool { return callSIDPattern.MatchString(s) }
