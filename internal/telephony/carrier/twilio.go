package carrier

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/agentline/agentline"
)

// TwilioConfig says how to reach Twilio's REST API.
type TwilioConfig struct {
	AccountSID string
	AuthToken  string
	// BaseURL replaces https://api.twilio.com (for twiliofake and the
	// sandbox); empty means the real API.
	BaseURL string
	// Timeout bounds each request; 15 s when zero.
	Timeout time.Duration
}

// Twilio is the Carrier over Twilio's REST API, through twilio-go.
type Twilio struct {
	cfg     TwilioConfig
	base    *url.URL
	timeout time.Duration
}

// NewTwilio returns a Twilio carrier client.
func NewTwilio(cfg TwilioConfig) (*Twilio, error) {
	t := &Twilio{cfg: cfg, timeout: cfg.Timeout}
	if t.timeout <= 0 {
		t.timeout = 15 * time.Second
	}
	if cfg.BaseURL != "" && cfg.BaseURL != "https://api.twilio.com" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("twilio base URL %q is not an http(s) URL", cfg.BaseURL)
		}
		t.base = u
	}
	return t, nil
}

// api returns a twilio-go service whose requests carry ctx and go to the
// configured base URL. twilio-go builds requests without a context and with
// its base URL fixed, so both are put in by the transport; the service is a
// few small structs, cheap to build per call.
func (t *Twilio) api(ctx context.Context) *openapi.ApiService {
	c := &client.Client{
		Credentials: client.NewCredentials(t.cfg.AccountSID, t.cfg.AuthToken),
		HTTPClient: &http.Client{
			Transport:     &rewriter{ctx: ctx, base: t.base, next: http.DefaultTransport},
			Timeout:       t.timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
	c.SetAccountSid(t.cfg.AccountSID)
	return openapi.NewApiServiceWithClient(c)
}

// rewriter sends each request with ctx, to base when set.
type rewriter struct {
	ctx  context.Context
	base *url.URL
	next http.RoundTripper
}

func (rw *rewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(rw.ctx)
	if rw.base != nil {
		r.URL.Scheme, r.URL.Host, r.Host = rw.base.Scheme, rw.base.Host, rw.base.Host
		r.URL.Path = strings.TrimSuffix(rw.base.Path, "/") + r.URL.Path
	}
	return rw.next.RoundTrip(r)
}

// AvailableNumbers implements Carrier: one page of voice-capable US local
// numbers.
func (t *Twilio) AvailableNumbers(ctx context.Context, areaCode string) ([]AvailableNumber, error) {
	p := (&openapi.ListAvailablePhoneNumberLocalParams{}).SetVoiceEnabled(true).SetPageSize(20)
	if areaCode != "" {
		n, err := strconv.Atoi(areaCode)
		if err != nil {
			return nil, agentline.Invalid("area_code", "area_code must be three digits")
		}
		p.SetAreaCode(n)
	}
	page, err := t.api(ctx).PageAvailablePhoneNumberLocal("US", p, "", "")
	if err != nil {
		return nil, carrierError("search numbers", err)
	}
	out := make([]AvailableNumber, 0, len(page.AvailablePhoneNumbers))
	for _, n := range page.AvailablePhoneNumbers {
		a := AvailableNumber{PhoneNumber: str(n.PhoneNumber), FriendlyName: str(n.FriendlyName),
			Locality: str(n.Locality), Region: str(n.Region), PostalCode: str(n.PostalCode)}
		if c := n.Capabilities; c != nil {
			a.Capabilities = Capabilities{Voice: c.Voice, SMS: c.Sms, MMS: c.Mms}
		}
		out = append(out, a)
	}
	return out, nil
}

// BuyNumber implements Carrier.
func (t *Twilio) BuyNumber(ctx context.Context, req BuyRequest) (string, error) {
	p := (&openapi.CreateIncomingPhoneNumberParams{}).
		SetPhoneNumber(req.PhoneNumber).SetFriendlyName(req.FriendlyName).
		SetVoiceUrl(req.VoiceURL).SetVoiceMethod("POST").
		SetStatusCallback(req.StatusCallbackURL).SetStatusCallbackMethod("POST")
	n, err := t.api(ctx).CreateIncomingPhoneNumber(p)
	if err != nil {
		return "", carrierError("buy number", err)
	}
	if n.Sid == nil || *n.Sid == "" {
		return "", agentline.Errorf(agentline.ECarrier, "the carrier sold the number but returned no SID")
	}
	return *n.Sid, nil
}

// FindNumber implements Carrier.
func (t *Twilio) FindNumber(ctx context.Context, phoneNumber string) (string, error) {
	page, err := t.api(ctx).PageIncomingPhoneNumber((&openapi.ListIncomingPhoneNumberParams{}).SetPhoneNumber(phoneNumber).SetPageSize(20), "", "")
	if err != nil {
		return "", carrierError("look up number", err)
	}
	for _, n := range page.IncomingPhoneNumbers {
		if str(n.PhoneNumber) == phoneNumber && str(n.Sid) != "" {
			return *n.Sid, nil
		}
	}
	return "", ErrNumberGone
}

// ReleaseNumber implements Carrier.
func (t *Twilio) ReleaseNumber(ctx context.Context, sid string) error {
	err := t.api(ctx).DeleteIncomingPhoneNumber(sid, nil)
	if notFound(err) {
		return ErrNumberGone
	}
	if err != nil {
		return carrierError("release number", err)
	}
	return nil
}

// CreateCall implements Carrier, asking for every status callback event,
// and for machine detection in the background when the request says so.
func (t *Twilio) CreateCall(ctx context.Context, req CallRequest) (CarrierCall, error) {
	p := (&openapi.CreateCallParams{}).SetTo(req.To).SetFrom(req.From).SetTwiml(req.TwiML).
		SetStatusCallback(req.StatusCallbackURL).SetStatusCallbackMethod("POST").
		SetStatusCallbackEvent([]string{"initiated", "ringing", "answered", "completed"})
	if md := req.MachineDetection; md != nil {
		p.SetMachineDetection(md.Mode).SetAsyncAmd("true").
			SetAsyncAmdStatusCallback(md.CallbackURL).SetAsyncAmdStatusCallbackMethod("POST")
	}
	c, err := t.api(ctx).CreateCall(p)
	if err != nil {
		return CarrierCall{}, carrierError("create call", err)
	}
	if c.Sid == nil || *c.Sid == "" {
		return CarrierCall{}, agentline.Errorf(agentline.ECarrier, "the carrier accepted the call but returned no SID")
	}
	return CarrierCall{SID: *c.Sid, Status: orQueued(str(c.Status))}, nil
}

// HangUp implements Carrier: Status=completed ends the call in any state.
func (t *Twilio) HangUp(ctx context.Context, callSID string) (string, error) {
	c, err := t.api(ctx).UpdateCall(callSID, (&openapi.UpdateCallParams{}).SetStatus("completed"))
	if notFound(err) {
		return "", ErrCallGone
	}
	if err != nil {
		return "", carrierError("hang up", err)
	}
	return orQueued(str(c.Status)), nil
}

// CallStatus implements Carrier.
func (t *Twilio) CallStatus(ctx context.Context, callSID string) (string, error) {
	c, err := t.FetchCall(ctx, callSID)
	return c.Status, err
}

// FetchCall implements Carrier: GET .../Calls/{CallSid}.json. Twilio gives
// the duration as a string of seconds and the end as an RFC 2822 time,
// both null until the call ends.
func (t *Twilio) FetchCall(ctx context.Context, callSID string) (CallState, error) {
	c, err := t.api(ctx).FetchCall(callSID, nil)
	if notFound(err) {
		return CallState{}, ErrCallGone
	}
	if err != nil {
		return CallState{}, carrierError("look up call", err)
	}
	st := CallState{Status: orQueued(str(c.Status)), AnsweredBy: str(c.AnsweredBy)}
	if d, err := strconv.Atoi(str(c.Duration)); err == nil && d >= 0 {
		st.DurationS = &d
	}
	if at, err := time.Parse(time.RFC1123Z, str(c.EndTime)); err == nil {
		st.EndedAt = at.UTC()
	}
	return st, nil
}

// Redirect implements Carrier: the call runs the given TwiML from now on,
// which ends its media stream.
func (t *Twilio) Redirect(ctx context.Context, callSID, twiml string) error {
	_, err := t.api(ctx).UpdateCall(callSID, (&openapi.UpdateCallParams{}).SetTwiml(twiml))
	if notFound(err) {
		return ErrCallGone
	}
	if err != nil {
		return carrierError("update call", err)
	}
	return nil
}

// FindCalls implements Carrier: GET .../Calls.json?To=&From=, one page of
// the newest calls (Twilio lists them newest first), kept from after on by
// their date_created (RFC 2822, to the second: after is rounded down).
func (t *Twilio) FindCalls(ctx context.Context, from, to string, after time.Time) ([]FoundCall, error) {
	page, err := t.api(ctx).PageCall((&openapi.ListCallParams{}).SetTo(to).SetFrom(from).SetPageSize(50), "", "")
	if err != nil {
		return nil, carrierError("list calls", err)
	}
	after = after.Truncate(time.Second)
	var out []FoundCall
	for _, c := range page.Calls {
		created, err := time.Parse(time.RFC1123Z, str(c.DateCreated))
		if err != nil || created.Before(after) || str(c.Sid) == "" {
			continue
		}
		f := FoundCall{SID: str(c.Sid), Created: created.UTC(), CallState: CallState{Status: orQueued(str(c.Status)), AnsweredBy: str(c.AnsweredBy)}}
		if d, err := strconv.Atoi(str(c.Duration)); err == nil && d >= 0 {
			f.DurationS = &d
		}
		if at, err := time.Parse(time.RFC1123Z, str(c.EndTime)); err == nil {
			f.EndedAt = at.UTC()
		}
		out = append(out, f)
	}
	return out, nil
}

// notFound reports whether the carrier answered 404: it does not know the
// number or call (any more).
func notFound(err error) bool {
	var tre *client.TwilioRestError
	return errors.As(err, &tre) && tre.Status == http.StatusNotFound
}

// carrierError turns a twilio-go error into carrier_error: the carrier's
// own message is safe to show; the rest is kept for the log.
func carrierError(op string, err error) error {
	var tre *client.TwilioRestError
	var netErr net.Error
	switch {
	case errors.As(err, &tre):
		return &agentline.Error{Code: agentline.ECarrier, Err: fmt.Errorf("%s: %w", op, err),
			Message: fmt.Sprintf("the carrier refused to %s: %s (Twilio error %d)", op, tre.Message, tre.Code)}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return &agentline.Error{Code: agentline.ECarrier, Err: fmt.Errorf("%s: %w: %w", op, ErrNoAnswer, err),
			Message: fmt.Sprintf("the carrier did not answer in time (%s)", op)}
	}
	return &agentline.Error{Code: agentline.ECarrier, Err: fmt.Errorf("%s: %w: %w", op, ErrNoAnswer, err),
		Message: fmt.Sprintf("could not reach the carrier (%s)", op)}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orQueued(status string) string {
	if status == "" {
		return agentline.CallQueued
	}
	return status
}
