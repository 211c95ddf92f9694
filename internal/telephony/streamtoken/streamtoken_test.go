package streamtoken

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStreamToken(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	tok := Sign("s3cret", 7, "CA0123", "inbound", now.Add(time.Minute))
	c, err := Verify("s3cret", tok, 7, now)
	if err != nil || c.AgentID != 7 || c.Ref != "CA0123" || c.Direction != "inbound" || c.Expires != now.Add(time.Minute).Unix() {
		t.Fatalf("Verify = %+v, %v", c, err)
	}
	payload, sig, _ := strings.Cut(tok, ".")
	forged := func(claims string) string {
		return base64.RawURLEncoding.EncodeToString([]byte(claims)) + "." + sig
	}
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	bad := []struct {
		name, secret, token string
		agent               int64
		now                 time.Time
	}{
		{"wrong secret", "other", tok, 7, now},
		{"other agent", "s3cret", tok, 8, now},
		{"expired", "s3cret", tok, 7, now.Add(time.Minute)},
		{"long expired", "s3cret", tok, 7, now.Add(time.Hour)},
		{"payload byte changed", "s3cret", flip(payload, 3) + "." + sig, 7, now},
		{"signature byte changed", "s3cret", payload + "." + flip(sig, 5), 7, now},
		{"agent swapped in payload", "s3cret", forged(`{"a":8,"r":"CA0123","d":"inbound","e":9999999999}`), 8, now},
		{"later expiry in payload", "s3cret", forged(`{"a":7,"r":"CA0123","d":"inbound","e":9999999999}`), 7, now},
		{"no signature", "s3cret", payload, 7, now},
		{"empty signature", "s3cret", payload + ".", 7, now},
		{"empty", "s3cret", "", 7, now},
		{"not base64", "s3cret", "!!!.???", 7, now},
		{"signature of another token", "s3cret", payload + "." + strings.SplitN(Sign("s3cret", 7, "CA9", "inbound", now.Add(time.Minute)), ".", 2)[1], 7, now},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			if _, err := Verify(b.secret, b.token, b.agent, b.now); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Verify = %v, want ErrInvalid", err)
			}
		})
	}
}

func BenchmarkVerifyStreamToken(b *testing.B) {
	now := time.Now()
	tok := Sign("s3cret", 7, "CA0123456789abcdef0123456789abcdef", "outbound", now.Add(time.Minute))
	for b.Loop() {
		if _, err := Verify("s3cret", tok, 7, now); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzVerifyStreamToken: no input panics, and whatever verifies was signed
// with the secret for that agent.
func FuzzVerifyStreamToken(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	f.Add(Sign("s3cret", 7, "CA1", "inbound", now.Add(time.Minute)), int64(7))
	f.Add("e30.AAAA", int64(0))
	f.Add("..", int64(-1))
	f.Fuzz(func(t *testing.T, token string, agentID int64) {
		c, err := Verify("s3cret", token, agentID, now)
		if err != nil {
			return
		}
		if c.AgentID != agentID || c.Expires <= now.Unix() {
			t.Fatalf("verified bad claims %+v for agent %d", c, agentID)
		}
	})
}

// A test call's token carries its user, which a carrier's token leaves
// out (its encoding is unchanged), and the user cannot be changed without
// the secret.
func TestTestCallToken(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	want := Claims{AgentID: 7, Ref: "CA0123", Direction: "test", Expires: now.Add(TestTTL).Unix(), UserID: 42}
	tok := SignClaims("s3cret", want)
	if c, err := Verify("s3cret", tok, 7, now); err != nil || c != want {
		t.Fatalf("Verify = %+v, %v; want %+v", c, err, want)
	}
	if _, err := Verify("s3cret", tok, 7, now.Add(TestTTL)); !errors.Is(err, ErrInvalid) {
		t.Errorf("a test call's token a minute on: %v, want expired", err)
	}
	carrier := Sign("s3cret", 7, "CA0123", "inbound", now.Add(TTL))
	if payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(carrier, ".")[0]); strings.Contains(string(payload), `"u"`) {
		t.Errorf("a carrier's token names a user: %s", payload)
	}
	_, sig, _ := strings.Cut(tok, ".")
	other := want
	other.UserID = 43
	forged := strings.Split(SignClaims("s3cret", other), ".")[0] + "." + sig
	if _, err := Verify("s3cret", forged, 7, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("a token with another user and the first one's signature: %v", err)
	}
}
