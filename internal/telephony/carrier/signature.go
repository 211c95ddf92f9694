package carrier

import (
	"errors"
	"net/http"

	"github.com/twilio/twilio-go/client"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// Signatures checks the X-Twilio-Signature of the carrier's webhooks and
// media stream upgrades. The URL checked is
// the public one the carrier was given, https://{BOT_HOST} plus the
// request's raw path and query, never one rebuilt from r.Host, which a
// proxy in front of the service changes.
type Signatures struct {
	validator client.RequestValidator
	keyed     bool // an empty token would let anyone sign
	botHost   string
	skip      bool
}

// NewSignatures returns a checker keyed with the carrier's auth token. It
// checks every request whatever the environment: a development deployment
// reachable from the internet would otherwise open model sockets (billed)
// for anyone. Without a token nothing verifies, so everything is refused.
// skip (AGENTLINE_SKIP_CARRIER_SIGNATURES, refused in production) lets every
// request pass, for hand-made requests while developing.
func NewSignatures(authToken, botHost string, skip bool) *Signatures {
	return &Signatures{validator: client.NewRequestValidator(authToken), keyed: authToken != "", botHost: botHost, skip: skip}
}

// Route is a carrier webhook route (a form POST), behind Check.
func (s *Signatures) Route(pattern string, fn httpx.HandlerFunc) httpx.Route {
	return httpx.Route{Method: "POST", Pattern: pattern, Auth: httpx.Carrier, Name: httpx.NameOf(fn), Handler: s.Check(fn)}
}

// Check wraps a form-POST webhook: it parses the form and answers 403
// forbidden unless the signature matches (or checks are skipped).
func (s *Signatures) Check(next httpx.HandlerFunc) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := r.ParseForm(); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return err
			}
			return agentline.Invalid("", "the body is not a valid form: %v", err)
		}
		if !s.skip && !s.Valid(r) {
			httpx.Logger(r.Context()).Warn("carrier webhook with a bad signature", "path", r.URL.Path, "remote", r.RemoteAddr)
			return s.mismatch(r, "https://")
		}
		return next(w, r)
	}
}

// Valid reports whether r, whose form is parsed, carries the signature
// the carrier computes for it.
func (s *Signatures) Valid(r *http.Request) bool {
	params := make(map[string]string, len(r.PostForm))
	for k, v := range r.PostForm {
		params[k] = v[0]
	}
	return s.valid(r, "https://", params)
}

// valid reports whether r carries the signature the carrier computes for
// its URL under scheme at the bot host, with params.
func (s *Signatures) valid(r *http.Request, scheme string, params map[string]string) bool {
	sig := r.Header.Get("X-Twilio-Signature")
	if sig == "" || !s.keyed || s.botHost == "" {
		return false
	}
	return s.validator.Validate(scheme+s.botHost+r.URL.RequestURI(), params, sig)
}

// CheckUpgrade checks, unless checks are skipped, the signature of a media stream's
// WebSocket upgrade: Twilio signs the wss:// URL alone. The URL is the same
// for every call of an agent, so the stream token in the start message is
// what binds a stream to its call.
func (s *Signatures) CheckUpgrade(r *http.Request) error {
	if s.skip {
		return nil
	}
	if !s.valid(r, "wss://", map[string]string{}) {
		httpx.Logger(r.Context()).Warn("media stream upgrade with a bad signature", "path", r.URL.Path, "remote", r.RemoteAddr)
		return s.mismatch(r, "wss://")
	}
	return nil
}

// mismatch is the 403 for a request whose signature does not verify. It
// names the URL a valid signature covers and the settings that decide it,
// since a signer that picked another host (a simulator without BOT_HOST,
// a tunnel with another name) otherwise cannot tell what to change. The
// URL reveals nothing secret: it is the public one the carrier is given.
func (s *Signatures) mismatch(r *http.Request, scheme string) error {
	forbid := func(format string, args ...any) error {
		return agentline.Errorf(agentline.EForbidden, "the X-Twilio-Signature header does not match this request: "+format, args...)
	}
	switch {
	case s.botHost == "":
		return forbid("BOT_HOST is not set, so no carrier request can be verified; set it to the public host the carrier reaches")
	case !s.keyed:
		return forbid("TWILIO_AUTH_TOKEN is not set, so no carrier request can be verified")
	}
	want := scheme + s.botHost + r.URL.RequestURI()
	if r.Header.Get("X-Twilio-Signature") == "" {
		return forbid("the request carries no X-Twilio-Signature; the carrier signs %q", want)
	}
	return forbid("expected a signature of %q (%s + BOT_HOST %q + the request's path and query) keyed with TWILIO_AUTH_TOKEN; "+
		"`agentline call` signs for its --bot-host (env BOT_HOST; against the sandbox it asks the server)", want, scheme, s.botHost)
}
