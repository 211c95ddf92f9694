package telephony

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Stream tokens let the media stream handler refuse a stream nobody asked
// for: the TwiML that opens a stream carries one in a <Parameter>, signed
// with the app's secret, naming the agent, the call (its SID for inbound
// calls, a random reference for outbound ones), the direction and an expiry.
// A token is "payload.mac", both base64url without padding, where payload is
// the JSON of Claims and mac is HMAC-SHA256(secret, payload).

// Claims are what a stream token vouches for.
type Claims struct {
	AgentID   int64  `json:"a"`
	Ref       string `json:"r"`
	Direction string `json:"d"`
	Expires   int64  `json:"e"` // Unix seconds
}

// StreamTokenTTL is how long a stream token stays good: long enough for an
// outbound call to ring out (60 s) and be answered, short enough that a
// leaked token is soon useless.
const StreamTokenTTL = 5 * time.Minute

// ErrBadStreamToken is returned for every token that does not verify; the
// reason is in the wrapped message, for the log.
var ErrBadStreamToken = errors.New("invalid stream token")

// Sign returns a stream token for the agent's call ref in direction, good
// until expires.
func Sign(secret string, agentID int64, ref string, direction string, expires time.Time) string {
	payload, _ := json.Marshal(Claims{AgentID: agentID, Ref: ref, Direction: direction, Expires: expires.Unix()})
	p := base64.RawURLEncoding.EncodeToString(payload)
	return p + "." + base64.RawURLEncoding.EncodeToString(mac(secret, p))
}

// Verify checks the token's signature (in constant time), its expiry
// against now, and that it was issued for agentID, and returns its claims.
func Verify(secret, token string, agentID int64, now time.Time) (Claims, error) {
	p, sig, ok := strings.Cut(token, ".")
	if !ok {
		return Claims{}, errors.Join(ErrBadStreamToken, errors.New("no signature"))
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, p)) {
		return Claims{}, errors.Join(ErrBadStreamToken, errors.New("bad signature"))
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return Claims{}, errors.Join(ErrBadStreamToken, errors.New("bad payload encoding"))
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Claims{}, errors.Join(ErrBadStreamToken, errors.New("bad payload"))
	}
	if now.Unix() >= c.Expires {
		return Claims{}, errors.Join(ErrBadStreamToken, errors.New("expired"))
	}
	if c.AgentID != agentID {
		return Claims{}, errors.Join(ErrBadStreamToken, errors.New("issued for another agent"))
	}
	return c, nil
}

func mac(secret, payload string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(payload))
	return m.Sum(nil)
}
