// Package streamtoken issues and checks the tokens that admit a call's
// media stream, so that nobody can open a relay to the realtime model (and
// bill it) without a call this deployment answered or placed. Tokens are
// issued where a call is connected (the inbound webhook, an outbound call)
// and checked where the stream arrives, so they live apart from both.
//
// The TwiML that opens a stream carries a token in a <Parameter>, signed
// with the app's secret, naming the agent, the call (its SID for inbound
// calls, a random reference for outbound ones), the direction and an expiry.
// A test call's token, minted for a signed-in user by the console instead
// of carried in TwiML, names the user too.
// A token is "payload.mac", both base64url without padding, where payload is
// the JSON of Claims and mac is HMAC-SHA256(secret, payload).
package streamtoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Claims are what a stream token vouches for.
type Claims struct {
	AgentID   int64  `json:"a"`
	Ref       string `json:"r"`
	Direction string `json:"d"`
	Expires   int64  `json:"e"` // Unix seconds
	// UserID is the user a test call's token was minted for.
	UserID int64 `json:"u,omitempty"`
}

// TTL is how long a stream token stays good: long enough for an
// outbound call to ring out (60 s) and be answered, short enough that a
// leaked token is soon useless.
const TTL = 5 * time.Minute

// TestTTL is how long a test call's token stays good: the browser that
// asked for it opens the stream at once.
const TestTTL = time.Minute

// ErrInvalid is returned for every token that does not verify; the
// reason is in the wrapped message, for the log.
var ErrInvalid = errors.New("invalid stream token")

// Sign returns a stream token for the agent's call ref in direction, good
// until expires.
func Sign(secret string, agentID int64, ref string, direction string, expires time.Time) string {
	return SignClaims(secret, Claims{AgentID: agentID, Ref: ref, Direction: direction, Expires: expires.Unix()})
}

// SignClaims returns a stream token vouching for c.
func SignClaims(secret string, c Claims) string {
	payload, _ := json.Marshal(c)
	p := base64.RawURLEncoding.EncodeToString(payload)
	return p + "." + base64.RawURLEncoding.EncodeToString(mac(secret, p))
}

// Verify checks the token's signature (in constant time), its expiry
// against now, and that it was issued for agentID, and returns its claims.
func Verify(secret, token string, agentID int64, now time.Time) (Claims, error) {
	p, sig, ok := strings.Cut(token, ".")
	if !ok {
		return Claims{}, errors.Join(ErrInvalid, errors.New("no signature"))
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, p)) {
		return Claims{}, errors.Join(ErrInvalid, errors.New("bad signature"))
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return Claims{}, errors.Join(ErrInvalid, errors.New("bad payload encoding"))
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Claims{}, errors.Join(ErrInvalid, errors.New("bad payload"))
	}
	if now.Unix() >= c.Expires {
		return Claims{}, errors.Join(ErrInvalid, errors.New("expired"))
	}
	if c.AgentID != agentID {
		return Claims{}, errors.Join(ErrInvalid, errors.New("issued for another agent"))
	}
	return c, nil
}

func mac(secret, payload string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(payload))
	return m.Sum(nil)
}
