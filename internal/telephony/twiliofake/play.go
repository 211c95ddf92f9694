package twiliofake

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Play makes the fake carry out the outbound calls it places, as the
// carrier and a callee would: status callbacks (initiated, ringing,
// answered, completed, for the events the call asked for), the callee
// answering after the ring, the call's TwiML run by Answer, machine
// detection's verdict when the call asked for it, and the end. Who
// answers depends on the number called (Pickup): a busy line ends busy
// and an unanswered phone no-answer, as at Twilio, neither ever in
// progress. Without Play calls stay queued until a test moves them
// (SetCallStatus). The sandbox's carrier plays its calls; tests of the
// sandbox do too.
type Play struct {
	// Server is the base URL (http://127.0.0.1:8080) webhooks are sent to
	// instead of the host their URLs name: the sandbox listens on loopback
	// while BOT_HOST names a public host. They are signed, as by Twilio,
	// over the URLs as given.
	Server string
	// Ring is how long the callee's phone rings before they answer;
	// default 1 s. A call canceled meanwhile is never answered.
	Ring time.Duration
	// Answer talks on the answered call (its TwiML's stream): it returns
	// when the callee has hung up or the stream has ended. Its ctx ends
	// when the call does otherwise (hung up through the API) or the fake
	// closes. Nil: the callee hangs up at once.
	Answer func(ctx context.Context, c Call) error
	// Client posts the webhooks; default a client with a 10 s timeout.
	Client *http.Client
	// Pickup says who or what a call to a number reaches; ByLastDigit
	// when nil. Answer finds it in Call.Pickup.
	Pickup func(to string) Pickup
	// NoAnswer is how long a phone nobody answers rings before the call
	// ends no-answer; default 3 s.
	NoAnswer time.Duration
}

func (p *Play) pickup(to string) Pickup {
	if p.Pickup == nil {
		return ByLastDigit(to)
	}
	return p.Pickup(to)
}

// dialDelay is how long the fake takes to dial a call it was asked for,
// as Twilio does: the client records the call's SID meanwhile, so that
// the first callback is about a call it knows.
const dialDelay = 200 * time.Millisecond

// play carries out the outbound call sid as opts say, from dialing to
// the final status callback.
func (f *Fake) play(sid string) {
	defer f.playing.Done()
	p := f.player
	ring := p.Ring
	if ring <= 0 {
		ring = time.Second
	}
	noAnswer := p.NoAnswer
	if noAnswer <= 0 {
		noAnswer = noAnswerAfter
	}
	f.mu.Lock()
	c := f.callByID(sid)
	ended, pickup, redirected := c.ended, c.Pickup, c.redirected
	f.mu.Unlock()
	if !f.pause(dialDelay, ended) {
		f.callback(sid)
		return
	}
	f.callback(sid, "initiated")
	if pickup == PickupBusy {
		f.endUnanswered(sid, "busy", busyAfter, ended)
		return
	}
	f.moveCall(sid, "ringing")
	f.callback(sid, "ringing")
	if pickup == PickupNoAnswer {
		f.endUnanswered(sid, "no-answer", noAnswer, ended)
		return
	}
	if !f.pause(ring, ended) {
		f.callback(sid)
		return
	}
	f.moveCall(sid, "in-progress")
	f.callback(sid, "answered")
	f.detect(sid, ended)
	if p.Answer != nil {
		ctx, cancel := context.WithCancel(f.ctx)
		go func() {
			select {
			case <-ended:
				cancel()
			case <-redirected:
				cancel() // the new TwiML ends the stream
			case <-ctx.Done():
			}
		}()
		p.Answer(ctx, f.callCopy(sid))
		cancel()
	}
	if f.wasRedirected(sid) && !f.runRedirect(sid, ended) {
		f.pause(f.player.maxCall(), ended) // a <Dial> or a new stream: until hung up
	}
	f.moveCall(sid, "completed") // the callee hung up, unless the call ended otherwise
	f.callback(sid)
}

// wasRedirected reports whether the call's TwiML was replaced.
func (f *Fake) wasRedirected(sid string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.callByID(sid).wasRedirected
}

// maxCall bounds a played call that waits to be hung up: Twilio's own
// limit on a call, four hours.
func (p *Play) maxCall() time.Duration { return 4 * time.Hour }

// endUnanswered ends a call nobody answered with status (busy, no-answer)
// after d, unless it ended otherwise meanwhile (canceled), and reports its
// end in the completed event's callback, as Twilio does.
func (f *Fake) endUnanswered(sid, status string, d time.Duration, ended <-chan struct{}) {
	if f.pause(d, ended) {
		f.moveCall(sid, status)
	}
	f.callback(sid)
}

// pause waits d; false when the call ended or the fake closed meanwhile.
func (f *Fake) pause(d time.Duration, ended <-chan struct{}) bool {
	select {
	case <-time.After(d):
		return true
	case <-ended:
	case <-f.ctx.Done():
	}
	return false
}

// moveCall moves a call to status, unless it has ended already.
func (f *Fake) moveCall(sid, status string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.callByID(sid); c != nil && c.Ended.IsZero() {
		c.setStatus(status, time.Now().UTC())
	}
}

func (f *Fake) callCopy(sid string) Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.callByID(sid)
}

// callByID is the call sid, or nil; f.mu must be held.
func (f *Fake) callByID(sid string) *Call {
	for _, c := range f.calls {
		if c.SID == sid {
			return c
		}
	}
	return nil
}

// callback posts the call's status callback for event, if the call asked
// for it (Twilio's default is completed alone); no event means the
// completed event, which carries whatever final status the call has. Like
// Twilio it does not retry: a callback that fails is lost.
func (f *Fake) callback(sid string, event ...string) {
	ev := "completed"
	if len(event) > 0 {
		ev = event[0]
	}
	f.mu.Lock()
	c := f.callByID(sid)
	events := c.StatusCallbackEvents
	if len(events) == 0 {
		events = []string{"completed"}
	}
	asked := false
	for _, e := range events {
		asked = asked || e == ev
	}
	if !asked || c.StatusCallback == "" || c.StatusCallbackMethod != "POST" {
		f.mu.Unlock()
		return
	}
	status := c.Status
	if ev == "initiated" {
		status = "initiated" // a status of callbacks only: the call resource stays queued
	}
	form := url.Values{
		"AccountSid": {f.accountSID}, "ApiVersion": {"2010-04-01"}, "CallSid": {c.SID}, "CallStatus": {status},
		"Called": {c.To}, "Caller": {c.From}, "To": {c.To}, "From": {c.From}, "Direction": {"outbound-api"},
		"CallbackSource": {"call-progress-events"}, "Timestamp": {time.Now().UTC().Format(time.RFC1123Z)},
		"SequenceNumber": {strconv.Itoa(c.sequence)},
	}
	c.sequence++
	if c.AnsweredBy != "" {
		form.Set("AnsweredBy", c.AnsweredBy)
	}
	if !c.Ended.IsZero() {
		d := 0
		if !c.Started.IsZero() {
			d = int(c.Ended.Sub(c.Started).Round(time.Second) / time.Second)
		}
		form.Set("CallDuration", strconv.Itoa(d))
	}
	target := c.StatusCallback
	c.Callbacks = append(c.Callbacks, form)
	f.mu.Unlock()
	f.post(target, form)
}

// post sends a signed webhook to the player's server.
func (f *Fake) post(target string, form url.Values) {
	u, err := url.Parse(target)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(f.player.Server, "/")+u.RequestURI(), strings.NewReader(form.Encode()))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", Sign(f.authToken, target, form))
	client := f.player.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	res, err := client.Do(req)
	if err == nil {
		res.Body.Close()
	}
}
