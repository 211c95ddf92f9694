package provider

import (
	"net/url"
	"strings"
)

// RealtimeURL is the realtime WebSocket of model at an OpenAI-compatible
// base URL, for a server's socket (phone calls, test runs).
func RealtimeURL(base, model string) string {
	base = strings.TrimSuffix(base, "/")
	switch {
	case strings.HasPrefix(base, "https://"):
		base = "wss://" + strings.TrimPrefix(base, "https://")
	case strings.HasPrefix(base, "http://"):
		base = "ws://" + strings.TrimPrefix(base, "http://")
	}
	return base + "/v1/realtime?model=" + url.QueryEscape(model)
}
