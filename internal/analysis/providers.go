package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentline/agentline"
)

// Request is what an Analyst is asked: instructions, the transcript, and
// the JSON Schema the answer must match (nil: free text, as a simulated
// person's turn is answered).
type Request struct {
	Instructions string
	Transcript   string
	Schema       map[string]any
	// Lines is the transcript as lines (the sandbox answers from them).
	Lines []agentline.Line
	// Scenario is set when a test scenario is played or judged: the
	// sandbox answers by its documented rules from it.
	Scenario *agentline.TestScenario
}

// Analyst answers a Request with the text of a JSON document (checked by
// the worker against the schema).
type Analyst interface {
	Analyze(ctx context.Context, r Request) (string, error)
	// Model names the model that answers, stored with the analysis.
	Model() string
}

// PermanentError is a failure that another attempt would not fix (a
// refused key, an unknown model, a request the provider calls invalid):
// the analysis fails at once.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// maxAnswer bounds a provider's answer.
const maxAnswer = 1 << 20

// post sends body as JSON and decodes a 2xx answer into out. 429, 5xx and
// network errors are retried by the job; any other answer is permanent.
func post(ctx context.Context, hc *http.Client, who, u string, header http.Header, body, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return &PermanentError{err}
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may carry a key (never for these two, but cheap)
		}
		return fmt.Errorf("%s: %w", who, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", who, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := fmt.Errorf("%s answered %s: %s", who, resp.Status, withoutKey(providerMessage(data), header))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout {
			return err
		}
		return &PermanentError{err}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return invalidAnswer("%s: %v", who, err)
	}
	return nil
}

// providerMessage is error.message of a provider's error answer (both
// OpenAI and Gemini answer {"error": {"message": ...}}), or the start of
// the body.
func providerMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// withoutKey removes the request's key from a provider's message, which
// may repeat it (OpenAI repeats a refused key, partly masked): the message
// is stored with the analysis and shown by the API.
func withoutKey(msg string, header http.Header) string {
	for _, v := range []string{strings.TrimPrefix(header.Get("Authorization"), "Bearer "), header.Get("x-goog-api-key")} {
		if len(v) < 8 {
			continue
		}
		msg = strings.ReplaceAll(msg, v, "[redacted]")
		msg = strings.ReplaceAll(msg, v[:len(v)-4], "[redacted]")
		msg = strings.ReplaceAll(msg, v[4:], "[redacted]")
	}
	return msg
}
