package provideraccount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
)

// providerName is how messages name a kind.
func providerName(kind agentline.Provider) string {
	if kind == agentline.ProviderGemini {
		return "Gemini-compatible"
	}
	return "OpenAI-compatible"
}

// checkKey makes the cheapest authenticated request of the kind's API,
// listing models: an OpenAI-compatible provider's GET /v1/models with a
// bearer key, a Gemini-compatible one's GET /v1beta/models with
// x-goog-api-key. A refusal is 400 naming the provider's status and
// message; a provider that cannot be reached, or answers in a way that is
// no answer, is 502. Neither message ever includes the key.
func (a *Accounts) checkKey(ctx context.Context, kind agentline.Provider, c agentline.ProviderCredentials) error {
	name := providerName(kind)
	path, header := "/v1/models", http.Header{"Authorization": {"Bearer " + c.APIKey}}
	if kind == agentline.ProviderGemini {
		path, header = "/v1beta/models", http.Header{"X-Goog-Api-Key": {c.APIKey}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+path, nil)
	if err != nil {
		return agentline.Invalid("base_url", "base_url is not a URL agentline can send requests to")
	}
	req.Header = header
	hc := a.o.Client
	if c.BaseURL == a.o.Deployment[kind].BaseURL {
		hc = a.trusted
	}
	resp, err := hc.Do(req)
	if err != nil {
		if reason := egress.Refusal(err); reason != "" {
			return agentline.Invalid("base_url", "base_url: %s; agentline sends nothing to internal addresses (set %s=true to allow them while developing)",
				reason, egress.AllowSetting)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &agentline.Error{Code: agentline.EProvider,
			Message: fmt.Sprintf("the %s provider at %s could not be reached to check the key: %s", name, c.BaseURL, redact(err.Error(), c.APIKey))}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	msg := redact(providerMessage(body), c.APIKey)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return &agentline.Error{Code: agentline.EProvider,
			Message: fmt.Sprintf("the %s provider could not check the key now (status %d: %s); try again", name, resp.StatusCode, msg)}
	}
	return agentline.Invalid("api_key", "the %s provider refused the key (status %d: %s)", name, resp.StatusCode, msg)
}

// providerMessage is error.message of a provider's error answer (both
// kinds answer {"error": {"message": ...}}), or the start of the body.
func providerMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	s := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		s = e.Error.Message
	}
	if s == "" {
		return "no message"
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// redact removes the key, and any long part of it, from text a provider
// may have echoed it in (OpenAI repeats a refused key, partly masked).
func redact(text, key string) string {
	if key == "" {
		return text
	}
	text = strings.ReplaceAll(text, key, "[redacted]")
	if len(key) >= 12 {
		for _, part := range []string{key[:len(key)-4], key[4:]} {
			text = strings.ReplaceAll(text, part, "[redacted]")
		}
	}
	return text
}
