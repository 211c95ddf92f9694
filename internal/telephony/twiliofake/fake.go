// Package twiliofake is an in-process Twilio REST server on loopback. It
// speaks the parts of the 2010-04-01 API agentline uses (number search,
// purchase, lookup and release; call creation, lookup and update) the way
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
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
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

	ended    chan struct{} // closed when the call reaches a final status
	sequence int           // of the next status callback
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

// FailNext makes the next authenticated request fail with a Twilio error of
// this HTTP status, error code and message. Calls queue up.
func (f *Fake) FailNext(status, code int, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = append(f.fail, failure{status, code, message})
}

// Hold is a request the fake keeps waiting.
type Hold struct {
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

// Arrived is closed when the held request has come in.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Release lets the held request proceed.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// HoldNext makes the next authenticated request wait until Release (or
// until its client gives up), to test timeouts and races.
func (f *Fake) HoldNext() *Hold {
	h := &Hold{arrived: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds = append(f.holds, h)
	return h
}

// AnswerLateNext makes the fake carry out the next authenticated request
// at once but hold its answer for d: a client that times out meanwhile has
// had its purchase or call made without hearing of it, as when an answer
// is lost on the way. Calls queue up.
func (f *Fake) AnswerLateNext(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.late = append(f.late, d)
}

// gate checks Basic auth and the account in the path, then applies the
// failure and hold switches.
func (f *Fake) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(f.accountSID)) != 1 ||
			subtle.ConstantTimeCompare([]byte(pass), []byte(f.authToken)) != 1 {
			writeError(w, http.StatusUnauthorized, 20003, "Authentication Error - invalid username")
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/2010-04-01/Accounts/"+f.accountSID+"/") {
			writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
			return
		}
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		var fail *failure
		if len(f.fail) > 0 {
			fail = &f.fail[0]
			f.fail = f.fail[1:]
		}
		var hold *Hold
		if len(f.holds) > 0 {
			hold = f.holds[0]
			f.holds = f.holds[1:]
		}
		late := time.Duration(-1)
		if len(f.late) > 0 {
			late = f.late[0]
			f.late = f.late[1:]
		}
		f.mu.Unlock()
		if hold != nil {
			close(hold.arrived)
			select {
			case <-hold.release:
			case <-r.Context().Done():
				return
			}
		}
		if fail != nil {
			writeError(w, fail.status, fail.code, fail.message)
			return
		}
		if late >= 0 {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r.WithContext(context.WithoutCancel(r.Context())))
			select {
			case <-time.After(late):
			case <-r.Context().Done():
				return
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (f *Fake) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	country := r.PathValue("country")
	if country != "US" {
		writeJSON(w, http.StatusOK, map[string]any{"available_phone_numbers": []AvailableNumber{}, "next_page_uri": nil, "uri": r.URL.RequestURI()})
		return
	}
	area := q.Get("AreaCode")
	if area != "" && !areaCode.MatchString(area) {
		writeError(w, http.StatusBadRequest, 21452, "AreaCode is invalid")
		return
	}
	size := 50
	if s := q.Get("PageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, 20001, "PageSize is invalid")
			return
		}
		size = n
	}
	for _, flag := range []string{"VoiceEnabled", "SmsEnabled", "MmsEnabled"} {
		if v := q.Get(flag); v != "" && v != "true" && v != "false" {
			writeError(w, http.StatusBadRequest, 20001, flag+" must be true or false")
			return
		}
	}
	f.mu.Lock()
	owned := map[string]bool{}
	for _, n := range f.numbers {
		if !n.Released {
			owned[n.PhoneNumber] = true
		}
	}
	out := []AvailableNumber{}
	for _, n := range f.available {
		if owned[n.PhoneNumber] || (area != "" && !strings.HasPrefix(n.PhoneNumber, "+1"+area)) {
			continue
		}
		if len(out) < size {
			out = append(out, n)
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"available_phone_numbers": out, "next_page_uri": nil, "uri": r.URL.RequestURI()})
}

var areaCode = regexp.MustCompile(`^[0-9]{3}$`)

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

func (f *Fake) buy(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	phone := r.PostForm.Get("PhoneNumber")
	if phone == "" && r.PostForm.Get("AreaCode") == "" {
		writeError(w, http.StatusBadRequest, 21450, "Either PhoneNumber or AreaCode is required")
		return
	}
	if phone == "" {
		writeError(w, http.StatusBadRequest, 21452, "No phone numbers found in area code")
		return
	}
	if !e164.MatchString(phone) {
		writeError(w, http.StatusBadRequest, 21421, "PhoneNumber is invalid")
		return
	}
	for _, field := range []string{"VoiceUrl", "StatusCallback"} {
		if v := r.PostForm.Get(field); v != "" && !validURL(v) {
			writeError(w, http.StatusBadRequest, 21502, field+" is not a valid URL: "+v)
			return
		}
	}
	for _, field := range []string{"VoiceMethod", "StatusCallbackMethod"} {
		if v := r.PostForm.Get(field); v != "" && v != "GET" && v != "POST" {
			writeError(w, http.StatusBadRequest, 21503, field+" must be GET or POST")
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.numbers {
		if n.PhoneNumber == phone && !n.Released {
			writeError(w, http.StatusBadRequest, 21422, "PhoneNumber "+phone+" is not available")
			return
		}
	}
	n := &Number{
		SID: "PN" + randomHex(16), PhoneNumber: phone, FriendlyName: r.PostForm.Get("FriendlyName"),
		VoiceURL: r.PostForm.Get("VoiceUrl"), VoiceMethod: orDefault(r.PostForm.Get("VoiceMethod"), "POST"),
		StatusCallback: r.PostForm.Get("StatusCallback"), StatusCallbackMethod: orDefault(r.PostForm.Get("StatusCallbackMethod"), "POST"),
	}
	if n.FriendlyName == "" {
		n.FriendlyName = phone
	}
	f.numbers = append(f.numbers, n)
	writeJSON(w, http.StatusCreated, f.numberJSON(n))
}

func (f *Fake) numberJSON(n *Number) map[string]any {
	return map[string]any{
		"sid": n.SID, "account_sid": f.accountSID, "phone_number": n.PhoneNumber, "friendly_name": n.FriendlyName,
		"voice_url": n.VoiceURL, "voice_method": n.VoiceMethod, "status_callback": n.StatusCallback,
		"status_callback_method": n.StatusCallbackMethod, "status": "in-use", "api_version": "2010-04-01",
		"capabilities": map[string]bool{"voice": true, "sms": true, "mms": true, "fax": false},
		"date_created": time.Now().UTC().Format(time.RFC1123Z),
		"uri":          "/2010-04-01/Accounts/" + f.accountSID + "/IncomingPhoneNumbers/" + n.SID + ".json",
	}
}

// listNumbers answers the account's numbers, filtered by PhoneNumber when
// given, in one page.
func (f *Fake) listNumbers(w http.ResponseWriter, r *http.Request) {
	phone := r.URL.Query().Get("PhoneNumber")
	f.mu.Lock()
	out := []map[string]any{}
	for _, n := range f.numbers {
		if !n.Released && (phone == "" || n.PhoneNumber == phone) {
			out = append(out, f.numberJSON(n))
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"incoming_phone_numbers": out, "next_page_uri": nil, "uri": r.URL.RequestURI()})
}

func (f *Fake) release(w http.ResponseWriter, r *http.Request) {
	sid, ok := strings.CutSuffix(r.PathValue("sid"), ".json")
	if !ok {
		writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.numbers {
		if n.SID == sid && !n.Released {
			n.Released = true
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
}

var callbackEvents = map[string]bool{"initiated": true, "ringing": true, "answered": true, "completed": true}

func (f *Fake) createCall(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	form := r.PostForm
	to, from := form.Get("To"), form.Get("From")
	switch {
	case to == "":
		writeError(w, http.StatusBadRequest, 21201, "No 'To' number is specified")
		return
	case !e164.MatchString(to):
		writeError(w, http.StatusBadRequest, 21211, "Invalid 'To' Phone Number: "+to)
		return
	case from == "":
		writeError(w, http.StatusBadRequest, 21213, "No 'From' number is specified")
		return
	case form.Get("Url") == "" && form.Get("Twiml") == "" && form.Get("ApplicationSid") == "":
		writeError(w, http.StatusBadRequest, 21205, "Url parameter is required")
		return
	case len(form.Get("Twiml")) > 4000:
		writeError(w, http.StatusBadRequest, 13232, "Twiml is longer than 4000 characters")
		return
	}
	if u := form.Get("Url"); u != "" && !validURL(u) {
		writeError(w, http.StatusBadRequest, 21205, "Url is not a valid URL: "+u)
		return
	}
	if u := form.Get("StatusCallback"); u != "" && !validURL(u) {
		writeError(w, http.StatusBadRequest, 21609, "StatusCallback is not a valid URL: "+u)
		return
	}
	for _, e := range form["StatusCallbackEvent"] {
		if !callbackEvents[e] {
			writeError(w, http.StatusBadRequest, 21626, "Invalid StatusCallbackEvent: "+e)
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	owned := false
	for _, n := range f.numbers {
		owned = owned || (n.PhoneNumber == from && !n.Released)
	}
	if !owned {
		writeError(w, http.StatusBadRequest, 21210, "The source phone number provided, "+from+", is not yet verified for your account")
		return
	}
	c := &Call{
		SID: "CA" + randomHex(16), To: to, From: from, Twiml: form.Get("Twiml"), URL: form.Get("Url"),
		StatusCallback: form.Get("StatusCallback"), StatusCallbackMethod: orDefault(form.Get("StatusCallbackMethod"), "POST"),
		StatusCallbackEvents: form["StatusCallbackEvent"], Status: "queued", Created: time.Now().UTC(),
		ended: make(chan struct{}),
	}
	f.calls = append(f.calls, c)
	if f.player != nil && f.ctx.Err() == nil {
		f.playing.Add(1)
		go f.play(c.SID)
	}
	writeJSON(w, http.StatusCreated, f.callJSON(c))
}

func (f *Fake) updateCall(w http.ResponseWriter, r *http.Request) {
	sid, ok := strings.CutSuffix(r.PathValue("sid"), ".json")
	if !ok || !parseForm(w, r) {
		if !ok {
			writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		}
		return
	}
	status := r.PostForm.Get("Status")
	if status != "" && status != "completed" && status != "canceled" {
		writeError(w, http.StatusBadRequest, 21218, "Invalid Status: "+status)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.SID != sid {
			continue
		}
		if tw := r.PostForm.Get("Twiml"); tw != "" {
			if c.Status != "in-progress" && c.Status != "ringing" && c.Status != "queued" {
				writeError(w, http.StatusBadRequest, 21220, "Call is not in-progress. Cannot redirect.")
				return
			}
			c.Twiml = tw
		}
		c.Updates = append(c.Updates, r.PostForm)
		// Hung up before it was answered, a call ends canceled whichever
		// status was asked: Twilio's canceled is "prior to being answered,
		// an outbound call was canceled via the REST API"; completed is
		// for a call that was answered.
		unanswered := c.Status == "queued" || c.Status == "ringing"
		switch {
		case (status == "completed" || status == "canceled") && unanswered:
			c.setStatus("canceled", time.Now().UTC())
		case status == "completed":
			c.setStatus("completed", time.Now().UTC())
		}
		writeJSON(w, http.StatusOK, f.callJSON(c))
		return
	}
	writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
}

func (f *Fake) fetchCall(w http.ResponseWriter, r *http.Request) {
	sid, _ := strings.CutSuffix(r.PathValue("sid"), ".json")
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.SID == sid {
			writeJSON(w, http.StatusOK, f.callJSON(c))
			return
		}
	}
	writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
}

// IncomingCall simulates someone dialing one of the account's numbers:
// the call exists at the fake (in progress) so it can be updated, and its
// SID is returned. It does not call the number's webhooks.
func (f *Fake) IncomingCall(from, to string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now().UTC()
	c := &Call{SID: "CA" + randomHex(16), To: to, From: from, Status: "in-progress", Created: now, Started: now, ended: make(chan struct{})}
	f.calls = append(f.calls, c)
	return c.SID
}

// SetCallStatus changes a call's status at the fake, as if the carrier had
// moved it on (for example to in-progress when the callee answers).
func (f *Fake) SetCallStatus(sid, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.SID == sid {
			c.setStatus(status, time.Now().UTC())
		}
	}
}

// callJSON is a call as Twilio's Call resource: times in RFC 2822, null
// until they happened; the duration a string of seconds, null until the
// call ended.
func (f *Fake) callJSON(c *Call) map[string]any {
	at := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.Format(time.RFC1123Z)
	}
	var duration any
	if !c.Ended.IsZero() {
		d := 0
		if !c.Started.IsZero() {
			d = int(c.Ended.Sub(c.Started).Round(time.Second) / time.Second)
		}
		duration = strconv.Itoa(d)
	}
	direction := "outbound-api"
	if c.StatusCallback == "" && c.Twiml == "" && c.URL == "" {
		direction = "inbound" // IncomingCall's
	}
	uri := "/2010-04-01/Accounts/" + f.accountSID + "/Calls/" + c.SID
	updated := c.Created
	for _, t := range []time.Time{c.Started, c.Ended} {
		if t.After(updated) {
			updated = t
		}
	}
	return map[string]any{
		"sid": c.SID, "account_sid": f.accountSID, "parent_call_sid": nil, "to": c.To, "to_formatted": c.To,
		"from": c.From, "from_formatted": c.From, "phone_number_sid": nil, "status": c.Status,
		"start_time": at(c.Started), "end_time": at(c.Ended), "duration": duration, "price": nil, "price_unit": "USD",
		"direction": direction, "answered_by": nil, "api_version": "2010-04-01", "forwarded_from": nil, "group_sid": nil,
		"caller_name": nil, "queue_time": "0", "trunk_sid": nil,
		"date_created": at(c.Created), "date_updated": at(updated),
		"uri": uri + ".json",
		"subresource_uris": map[string]string{
			"notifications": uri + "/Notifications.json", "recordings": uri + "/Recordings.json",
			"payments": uri + "/Payments.json", "events": uri + "/Events.json", "siprec": uri + "/Siprec.json",
			"streams": uri + "/Streams.json", "transcriptions": uri + "/Transcriptions.json",
			"user_defined_message_subscriptions": uri + "/UserDefinedMessageSubscriptions.json",
			"user_defined_messages":              uri + "/UserDefinedMessages.json",
		},
	}
}

// Sign returns the X-Twilio-Signature Twilio sends with a form POST to
// fullURL: base64 HMAC-SHA1, keyed with the auth token, of the URL followed
// by each parameter's name and value, sorted by name.
func Sign(authToken, fullURL string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(fullURL)
	for _, k := range keys {
		for _, v := range form[k] {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func parseForm(w http.ResponseWriter, r *http.Request) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		writeError(w, http.StatusBadRequest, 20001, "Content-Type must be application/x-www-form-urlencoded, not "+ct)
		return false
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, 20001, "malformed form body")
		return false
	}
	return true
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func writeError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, map[string]any{
		"code": code, "message": message, "status": status,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code),
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
