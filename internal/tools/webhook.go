package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress"
)

// maxRedirects is how many redirects a webhook call follows.
const maxRedirects = 3

// newWebhookClient returns the HTTP client of webhook calls: no proxy (a
// proxy would be dialed instead of the target, escaping the guard), a few
// redirects at most, each target checked by the guard when it is dialed.
// control is egress.Control, or nil for no guard.
func newWebhookClient(control func(network, address string, c syscall.RawConn) error, resolver *net.Resolver) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Resolver: resolver, Control: control}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    10,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a %s URL", req.URL.Scheme)
			}
			return nil
		},
	}
}

// Client is the HTTP client of webhook calls, with the SSRF guard (off when
// Options.AllowPrivateWebhooks is set), for the other requests agentline
// sends to URLs its users give, such as a form's notify_url.
func (f *Facility) Client() *http.Client { return f.client }

// callWebhook sends the arguments to the tool's URL and returns the
// response body.
func (f *Facility) callWebhook(ctx context.Context, agent agentline.Agent, tool agentline.WebhookTool, call agentline.ToolCall, args map[string]any) (string, bool, error) {
	timeout := time.Duration(tool.TimeoutMS) * time.Millisecond
	if timeout <= 0 || timeout > MaxTimeout {
		timeout = DefaultTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := buildRequest(cctx, tool, args)
	if err != nil {
		return "", false, &toolError{Code: "invalid_tool", Message: "the tool's URL cannot be used", cause: err}
	}
	for name, value := range tool.Headers {
		req.Header.Set(name, value)
	}
	req.Header.Set("User-Agent", "agentline-webhook/1")
	req.Header.Set("Accept", "application/json, text/plain;q=0.9, */*;q=0.5")
	req.Header.Set("X-Agentline-Agent-Id", strconv.FormatInt(agent.ID, 10))
	req.Header.Set("X-Agentline-Tool", tool.Name)
	if call.CallID != "" {
		req.Header.Set("X-Agentline-Call-Id", call.CallID)
	}

	resp, err := f.client.Do(req)
	if err != nil {
		return "", false, transportError(ctx, cctx, err, timeout)
	}
	defer resp.Body.Close()
	// Read one byte past the cap to know whether there was more; never the
	// whole of a huge body.
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxOutputBytes+1))
	if err != nil {
		return "", false, transportError(ctx, cctx, err, timeout)
	}
	more := len(body) > MaxOutputBytes
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet, _ := capOutput(body[:min(len(body), 512)], false)
		return "", false, &toolError{Code: "http_error", Status: resp.StatusCode,
			Message: fmt.Sprintf("the tool's endpoint answered %s: %s", resp.Status, snippet)}
	}
	if len(body) == 0 {
		return `{"ok":true}`, false, nil
	}
	out, truncated := capOutput(body, more)
	return out, truncated, nil
}

// buildRequest makes the webhook request: POST with the arguments as a JSON
// body, or GET with them in the query string.
func buildRequest(ctx context.Context, tool agentline.WebhookTool, args map[string]any) (*http.Request, error) {
	u, err := url.Parse(tool.URL)
	if err != nil {
		return nil, fmt.Errorf("the tool's URL does not parse: %w", err)
	}
	if tool.Method == http.MethodGet {
		q := u.Query()
		for k, v := range args {
			for _, s := range queryValues(v) {
				q.Add(k, s)
			}
		}
		u.RawQuery = q.Encode()
		return http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	}
	body, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// queryValues renders one argument for a query string: strings as they are,
// arrays as repeated values, everything else as JSON.
func queryValues(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, queryValues(e)...)
		}
		return out
	case nil:
		return []string{""}
	}
	b, _ := json.Marshal(v)
	return []string{string(b)}
}

// transportError tells apart a call that timed out, one the guard refused,
// one that failed to connect, and the caller giving up (agentline's error).
func transportError(parent, call context.Context, err error, timeout time.Duration) error {
	var blocked *egress.BlockedError
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("tool call: %w", parent.Err())
	case errors.As(err, &blocked):
		return &toolError{Code: "blocked_address", Message: "the tool's URL leads to an address webhooks may not reach: " + blocked.What}
	case errors.Is(call.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return &toolError{Code: "timeout", Message: fmt.Sprintf("the tool's endpoint did not answer within %s", timeout)}
	}
	return &toolError{Code: "unreachable", Message: "the tool's webhook could not be reached", cause: logNetError(err)}
}

// logNetError is a network error as the log keeps it: without the request
// URL, whose query may carry secrets.
func logNetError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
