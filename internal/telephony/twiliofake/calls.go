package twiliofake

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

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
	if !validAMD(form) {
		// 21263 is the code Twilio documents for invalid machine detection
		// parameters.
		writeError(w, http.StatusBadRequest, 21263, "Invalid Answering Machine Detection Parameters")
		return
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
		MachineDetection: form.Get("MachineDetection"), AsyncAmd: form.Get("AsyncAmd"),
		AsyncAmdStatusCallback:       form.Get("AsyncAmdStatusCallback"),
		AsyncAmdStatusCallbackMethod: orDefault(form.Get("AsyncAmdStatusCallbackMethod"), "POST"),
		ended:                        make(chan struct{}),
	}
	f.calls = append(f.calls, c)
	if f.player != nil && f.ctx.Err() == nil {
		c.Pickup, c.redirected = f.player.pickup(to), make(chan struct{})
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
			f.redirect(c, tw)
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
	var duration, answeredBy any
	if c.AnsweredBy != "" {
		answeredBy = c.AnsweredBy
	}
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
		"direction": direction, "answered_by": answeredBy, "api_version": "2010-04-01", "forwarded_from": nil, "group_sid": nil,
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
