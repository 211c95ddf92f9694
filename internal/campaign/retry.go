package campaign

import (
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// Bounds of a campaign's retry_after. At least a second, as the issue
// asks; at most thirty days, past which a retry is a new campaign, and
// which keeps a mistyped "1000h" from parking contacts for weeks.
const (
	DefaultRetryAfter = time.Hour
	MinRetryAfter     = time.Second
	MaxRetryAfter     = 30 * 24 * time.Hour
)

// ParseRetryAfter reads a campaign's retry_after: a Go duration such as
// "90s", "30m" or "1h30m", from 1s to 720h (30 days). The empty string is
// the default, 1h.
func ParseRetryAfter(s string) (time.Duration, error) {
	if s == "" {
		return DefaultRetryAfter, nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, agentline.Invalid("retry_after", `retry_after must be a duration such as "90s", "30m" or "1h30m" (units s, m, h; for days use hours, "48h"); got %s`, quote(s))
	case d < MinRetryAfter:
		return 0, agentline.Invalid("retry_after", `retry_after must be at least "1s"; got %s`, quote(s))
	case d > MaxRetryAfter:
		return 0, agentline.Invalid("retry_after", `retry_after must be at most "720h" (30 days); got %s`, quote(s))
	}
	return d, nil
}

// FormatRetryAfter spells d as ParseRetryAfter reads it, without the zero
// units time.Duration.String adds: "1h", "1h30m", "90s" as "1m30s".
func FormatRetryAfter(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
