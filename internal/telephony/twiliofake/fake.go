// Package twiliofake is an in-process Twilio REST server on loopback. It
// speaks the parts of the 2010-04-01 API agentline uses (number search,
// purchase, lookup and release; call creation, listing, lookup and update) the way
// the real API does: Basic auth with the account SID and auth token, form
// bodies checked field by field, and Twilio-shaped JSON errors. It records
// what it was asked so tests can inspect purchases, releases and calls, and
// it can be told to fail, hold or answer late the next request.
//
// Tests, the console and a sandbox mode use it:
//
//	f := twiliofake.New(twiliofake.Options{})
//	defer f.Close()
//	// point TWILIO_API_BASE_URL at f.URL(), with f.AccountSID() and f.AuthToken()
package twiliofake

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"
)

// SandboxAuthToken is the auth token of the sandbox's fake carrier when no
// TWILIO_AUTH_TOKEN is set: a known value, so that `agentline call` can
// sign its requests to a sandbox with no settings of its own. The sandbox
// is refused in production and its model is pretend, so a public token
// opens nothing billed.
const SandboxAuthToken = "sandbox0000000000000000000000000"

// Options configure a fake. Zero values get working defaults.
type Options struct {
	AccountSID string // default "AC" + 32 hex digits
	AuthToken  string // default 32 hex digits
	// Available is what number searches return; default: ten numbers in
	// area code 415 and ten in 212.
	Available []AvailableNumber
	// Play, when set, carries out the outbound calls placed, from ringing
	// to the end, with their status callbacks; see Play.
	Play *Play
}

// AvailableNumber is one result of a number search.
type AvailableNumber struct {
	PhoneNumber  string `json:"phone_number"`
	FriendlyName string `json:"friendly_name"`
	Locality     string `json:"locality"`
	Region       string `json:"region"`
	PostalCode   string `json:"postal_code"`
	IsoCountry   string `json:"iso_country"`
	Latitude     string `json:"latitude"`
	Longitude    string `json:"longitude"`
	Capabilities struct {
		Voice bool `json:"voice"`
		SMS   bool `json:"SMS"`
		MMS   bool `json:"MMS"`
	} `json:"capabilities"`
}

// Number is a number bought from the fake.
type Number struct {
	SID                  string
	PhoneNumber          string
	FriendlyName         string
	VoiceURL             string
	VoiceMethod          string
	StatusCallback       string
	StatusCallbackMethod string
	Released             bool
}

// Call is a call placed through the fake, with every update it received.
type Call struct {
	SID                  string
	To, From             string
	Twiml, URL           string
	StatusCallback       string
	StatusCallbackMethod string
	StatusCallbackEvents []string
	Status               string
	Updates              []url.Values
	// Created, Started (in progress) and Ended (a final status) are when
	// the call reached each stage; Twilio answers them as date_created,
	// start_time and end_time, with the duration between the last two.
	Created, Started, Ended time.Time
	// Callbacks are the status callbacks sent about the call (with Play),
	// oldest first.
	Callbacks []url.Values
	// MachineDetection, AsyncAmd, AsyncAmdStatusCallback and
	// AsyncAmdStatusCallbackMethod are the answering machine detection the
	// call was created with, as sent (the method POST when not given).
	MachineDetection, AsyncAmd                           string
	AsyncAmdStatusCallback, AsyncAmdStatusCallbackMethod string
	// AnsweredBy is machine detection's verdict, once given (with Play).
	AnsweredBy string
	// AMDCallbacks are the machine detection verdicts POSTed to
	// AsyncAmdStatusCallback (with Play).
	AMDCallbacks []url.Values
	// Pickup is who or what the call reaches (with Play; see Play.Pickup).
	Pickup Pickup
	// Said are the texts of the <Say> verbs spoken on the call after its
	// TwiML was replaced (with Play; see redirect.go).
	Said []string

	ended    chan struct{} // closed when the call reaches a final status
	sequence int           // of the next status callback
	// redirected is closed when a played call's TwiML is replaced, which
	// ends its stream.
	redirected    chan struct{}
	wasRedirected bool
}

// setStatus moves the call to status now, keeping its start and end.
func (c *Call) setStatus(status string, now time.Time) {
	c.Status = status
	switch status {
	case "in-progress":
		if c.Started.IsZero() {
			c.Started = now
		}
	case "completed", "busy", "failed", "no-answer", "canceled":
		if c.Ended.IsZero() {
			c.Ended = now
			if c.ended != nil {
				close(c.ended)
			}
		}
	}
}

// Fake is a running fake Twilio.
type Fake struct {
	srv        *httptest.Server
	accountSID string
	authToken  string

	mu        sync.Mutex
	available []AvailableNumber
	numbers   []*Number
	calls     []*Call
	fail      []failure
	holds     []*Hold
	late      []time.Duration
	requests  []string

	player  *Play
	ctx     context.Context // ends when the fake closes
	cancel  context.CancelFunc
	playing sync.WaitGroup // calls being played
}

type failure struct {
	status, code int
	message      string
}

// New starts a fake on 127.0.0.1.
func New(opts Options) *Fake {
	f := &Fake{accountSID: opts.AccountSID, authToken: opts.AuthToken, available: opts.Available, player: opts.Play}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	if f.accountSID == "" {
		f.accountSID = "AC" + randomHex(16)
	}
	if f.authToken == "" {
		f.authToken = randomHex(16)
	}
	if f.available == nil {
		f.available = append(defaultNumbers("415", "San Francisco", "CA", "94105"), defaultNumbers("212", "New York", "NY", "10001")...)
	}
	mux := http.NewServeMux()
	base := "/2010-04-01/Accounts/{account}/"
	mux.HandleFunc("GET "+base+"AvailablePhoneNumbers/{country}/Local.json", f.search)
	mux.HandleFunc("POST "+base+"IncomingPhoneNumbers.json", f.buy)
	mux.HandleFunc("GET "+base+"IncomingPhoneNumbers.json", f.listNumbers)
	mux.HandleFunc("DELETE "+base+"IncomingPhoneNumbers/{sid}", f.release)
	mux.HandleFunc("POST "+base+"Calls.json", f.createCall)
	mux.HandleFunc("GET "+base+"Calls.json", f.listCalls)
	mux.HandleFunc("POST "+base+"Calls/{sid}", f.updateCall)
	mux.HandleFunc("GET "+base+"Calls/{sid}", f.fetchCall)
	f.srv = httptest.NewServer(f.gate(mux))
	return f
}

func defaultNumbers(area, city, region, zip string) []AvailableNumber {
	var out []AvailableNumber
	for i := range 10 {
		n := AvailableNumber{
			PhoneNumber:  fmt.Sprintf("+1%s555%04d", area, 100+i),
			FriendlyName: fmt.Sprintf("(%s) 555-%04d", area, 100+i),
			Locality:     city, Region: region, PostalCode: zip, IsoCountry: "US",
			Latitude: "37.780000", Longitude: "-122.400000",
		}
		n.Capabilities.Voice, n.Capabilities.SMS, n.Capabilities.MMS = true, true, true
		out = append(out, n)
	}
	return out
}

// URL is the base URL to use instead of https://api.twilio.com.
func (f *Fake) URL() string { return f.srv.URL }

// AccountSID is the account SID the fake accepts.
func (f *Fake) AccountSID() string { return f.accountSID }

// AuthToken is the auth token the fake accepts.
func (f *Fake) AuthToken() string { return f.authToken }

// Close stops the fake, ends the calls it plays and lets held requests go.
func (f *Fake) Close() {
	f.mu.Lock()
	f.cancel() // under mu: no call starts playing after it
	for _, h := range f.holds {
		h.Release()
	}
	f.mu.Unlock()
	f.srv.CloseClientConnections()
	f.srv.Close()
	f.playing.Wait()
}

// Numbers lists the numbers the account owns now (bought, not released).
func (f *Fake) Numbers() []Number {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Number
	for _, n := range f.numbers {
		if !n.Released {
			out = append(out, *n)
		}
	}
	return out
}

// Released lists the numbers that were bought and released again.
func (f *Fake) Released() []Number {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Number
	for _, n := range f.numbers {
		if n.Released {
			out = append(out, *n)
		}
	}
	return out
}

// Calls lists every call placed, oldest first.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Call, len(f.calls))
	for i, c := range f.calls {
		out[i] = *c
		out[i].Updates = append([]url.Values(nil), c.Updates...)
		out[i].Callbacks = append([]url.Values(nil), c.Callbacks...)
		out[i].AMDCallbacks = append([]url.Values(nil), c.AMDCallbacks...)
		out[i].Said = append([]string(nil), c.Said...)
	}
	return out
}

// Requests lists "METHOD PATH" of every request that passed
// authentication, oldest first.
func (f *Fake) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}
