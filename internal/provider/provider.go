// Package provider talks to the realtime voice providers on behalf of a
// browser: it mints the short-lived token a widget uses to open its own
// session, with the agent's model, instructions, voice and tools locked in
// where the provider allows it. The server's API keys never leave it.
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/provider/geminilive"
)

// Config holds the providers' base URLs and keys (OPENAI_BASE_URL,
// OPENAI_API_KEY, GEMINI_BASE_URL, GEMINI_API_KEY).
type Config struct {
	OpenAIBaseURL string
	OpenAIAPIKey  string
	GeminiBaseURL string
	GeminiAPIKey  string
	// Credentials, when set, chooses each session's base URL and key by
	// its agent's project (a project's own provider account, else the
	// deployment's); the four fields above are not used then.
	Credentials Credentials
	// ProjectHTTP sends the requests to a project's own account's base
	// URL: a client that keeps to the outgoing address policy. nil uses
	// the client of New.
	ProjectHTTP *http.Client
	// Tracing, when set (tracing is on), gives the client New makes a span
	// per provider request.
	Tracing trace.TracerProvider
}

// Credentials are the base URL and key of a project's provider kind.
type Credentials interface {
	Credentials(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error)
}

// Client mints browser session tokens.
type Client struct {
	cfg  Config
	http *http.Client
	now  func() time.Time
}

// New returns a client; hc nil means a client with a 15 s timeout over
// transport.
func New(cfg Config, hc *http.Client) *Client {
	if hc == nil {
		hc = httpx.TracedClient(&http.Client{Timeout: 15 * time.Second, Transport: transport}, cfg.Tracing)
	}
	cfg.OpenAIBaseURL = strings.TrimSuffix(cfg.OpenAIBaseURL, "/")
	cfg.GeminiBaseURL = strings.TrimSuffix(cfg.GeminiBaseURL, "/")
	return &Client{cfg: cfg, http: hc, now: time.Now}
}

// maxIdleConnsPerHost is how many keep-alive connections to each provider
// the client keeps. Every widget session mints its token with one request
// to the provider, so concurrent sessions need as many connections; Go's
// default keeps 2, and each further request then opens (and TLS-handshakes)
// a new connection that is closed again right after. 64 covers the
// concurrency one instance serves (the widget load run's 50 clients); more
// load than that only costs new connections again, not errors.
const maxIdleConnsPerHost = 64

// transport is the HTTP transport of clients New makes: Go's default
// transport's settings, with maxIdleConnsPerHost connections kept per
// provider host.
var transport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4 * maxIdleConnsPerHost
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	return t
}()

// Token is what a browser needs to open its session with the provider.
type Token struct {
	Value     string    // ek_... (OpenAI) or auth_tokens/... (Gemini)
	ExpiresAt time.Time // no new session can be opened with Value after it
	URL       string    // where the browser connects
	Protocol  string    // webrtc or websocket
}

// Token lifetimes: a widget uses its token at once, so they are short.
const (
	openAISecretTTL      = 120 * time.Second
	geminiNewSessionTTL  = 60 * time.Second
	geminiTokenTTL       = 30 * time.Minute
	transcriptionModel   = "gpt-4o-mini-transcribe"
	maxProviderErrorBody = 4096
)

// Modality is how the agent answers in a session: spoken, with the
// visitor's microphone (the default), or in text, for a visitor who types:
// then the provider sends no audio and the browser asks for no
// microphone.
type Modality string

// The modalities of a session.
const (
	Audio Modality = "audio"
	Text  Modality = "text"
)

// SessionToken mints a token for a new session with the agent on its
// provider, offering tools, answering in modality ("" is Audio).
func (c *Client) SessionToken(ctx context.Context, agent agentline.Agent, tools []agentline.ToolDefinition, modality Modality) (Token, error) {
	switch agent.Provider {
	case agentline.ProviderOpenAI, agentline.ProviderGemini:
	default:
		return Token{}, agentline.Errorf(agentline.EUnsupportedProvider, "the agent's provider %q is not supported", agent.Provider)
	}
	creds, err := c.credentials(ctx, agent)
	if err != nil {
		return Token{}, err
	}
	if agent.Provider == agentline.ProviderGemini {
		return c.geminiToken(ctx, creds, agent, tools, modality == Text)
	}
	return c.openAISecret(ctx, creds, agent, tools, modality == Text)
}

// credentials are the base URL and key the agent's session uses.
func (c *Client) credentials(ctx context.Context, agent agentline.Agent) (agentline.ProviderCredentials, error) {
	if c.cfg.Credentials != nil {
		creds, err := c.cfg.Credentials.Credentials(ctx, agent.ProjectID, agent.Provider)
		creds.BaseURL = strings.TrimSuffix(creds.BaseURL, "/")
		return creds, err
	}
	if agent.Provider == agentline.ProviderGemini {
		return agentline.ProviderCredentials{BaseURL: c.cfg.GeminiBaseURL, APIKey: c.cfg.GeminiAPIKey}, nil
	}
	return agentline.ProviderCredentials{BaseURL: c.cfg.OpenAIBaseURL, APIKey: c.cfg.OpenAIAPIKey}, nil
}

// OpenAISessionRequest is the body of POST /v1/realtime/client_secrets.
type OpenAISessionRequest struct {
	ExpiresAfter struct {
		Anchor  string `json:"anchor"`
		Seconds int    `json:"seconds"`
	} `json:"expires_after"`
	Session OpenAISession `json:"session"`
}

// OpenAISession is the realtime session the secret is minted for.
type OpenAISession struct {
	Type         string `json:"type"`
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
	// OutputModalities is ["text"] for a text session; unset, the service
	// answers with audio (and its transcript).
	OutputModalities []string               `json:"output_modalities,omitempty"`
	Audio            *OpenAIAudio           `json:"audio,omitempty"`
	Tools            []agentline.OpenAITool `json:"tools,omitempty"`
	ToolChoice       string                 `json:"tool_choice,omitempty"`
}

// OpenAIAudio is the session's audio part: transcription of what the
// visitor says, and the voice of the answers.
type OpenAIAudio struct {
	Input struct {
		Transcription struct {
			Model    string `json:"model"`
			Language string `json:"language,omitempty"`
		} `json:"transcription"`
	} `json:"input"`
	Output struct {
		Voice string `json:"voice"`
	} `json:"output"`
}

// openAISecret mints a client secret. A text session asks for text output
// only and carries no audio settings: nothing is spoken or heard in it.
func (c *Client) openAISecret(ctx context.Context, creds agentline.ProviderCredentials, agent agentline.Agent, tools []agentline.ToolDefinition, text bool) (Token, error) {
	if creds.APIKey == "" {
		return Token{}, agentline.Errorf(agentline.ENotConfigured, "the OpenAI-compatible provider is not configured: the project has no account with it and the server no OPENAI_API_KEY")
	}
	var body OpenAISessionRequest
	body.ExpiresAfter.Anchor, body.ExpiresAfter.Seconds = "created_at", int(openAISecretTTL.Seconds())
	body.Session = OpenAISession{Type: "realtime", Model: agent.Model, Instructions: agent.Instructions, Tools: agentline.OpenAITools(tools)}
	if len(tools) > 0 {
		body.Session.ToolChoice = "auto"
	}
	if text {
		body.Session.OutputModalities = []string{"text"}
	} else {
		a := &OpenAIAudio{}
		a.Input.Transcription.Model = transcriptionModel
		a.Input.Transcription.Language = primaryLanguage(agent.Language)
		// The same mapping as on the phone path: an agent whose voice the
		// realtime API does not take (nova, a Gemini voice) still starts.
		a.Output.Voice, _ = agentline.RealtimeVoice(agent.Voice)
		body.Session.Audio = a
	}
	var out struct {
		Value     string `json:"value"`
		ExpiresAt int64  `json:"expires_at"`
	}
	header := http.Header{"Authorization": {"Bearer " + creds.APIKey}}
	if err := c.post(ctx, c.clientFor(creds), "OpenAI-compatible", creds.BaseURL+"/v1/realtime/client_secrets", header, body, &out); err != nil {
		return Token{}, err
	}
	if out.Value == "" {
		return Token{}, providerError("OpenAI-compatible", fmt.Errorf("answer has no value"))
	}
	exp := time.Unix(out.ExpiresAt, 0).UTC()
	if out.ExpiresAt == 0 {
		exp = c.now().Add(openAISecretTTL).UTC().Truncate(time.Second)
	}
	return Token{Value: out.Value, ExpiresAt: exp, URL: creds.BaseURL + "/v1/realtime/calls", Protocol: "webrtc"}, nil
}

// GeminiAuthTokenRequest is the body of POST /v1alpha/auth_tokens.
// bidiGenerateContentSetup is the setup itself, as Google's @google/genai
// SDK posts it; a {"setup": ...} wrapper, as in the Live WebSocket's first
// message, is not a field of the token request.
type GeminiAuthTokenRequest struct {
	Uses                     int         `json:"uses"`
	ExpireTime               string      `json:"expireTime"`
	NewSessionExpireTime     string      `json:"newSessionExpireTime"`
	BidiGenerateContentSetup GeminiSetup `json:"bidiGenerateContentSetup"`
}

// GeminiSetup is the Live API setup the token is constrained to: the
// Live session's own setup type, shared with the phone relay and test runs.
type GeminiSetup = geminilive.Setup

// geminiToken creates an auth token locked to the agent's setup. A text
// session's setup asks for no voice and no transcription of the visitor:
// TEXT answers, or, for a native-audio model (which refuses TEXT), AUDIO
// with outputAudioTranscription, the browser showing the transcription
// and playing nothing.
func (c *Client) geminiToken(ctx context.Context, creds agentline.ProviderCredentials, agent agentline.Agent, tools []agentline.ToolDefinition, text bool) (Token, error) {
	if creds.APIKey == "" {
		return Token{}, agentline.Errorf(agentline.ENotConfigured, "the Gemini-compatible provider is not configured: the project has no account with it and the server no GEMINI_API_KEY")
	}
	now := c.now().UTC()
	newSession := now.Add(geminiNewSessionTTL).Truncate(time.Second)
	body := GeminiAuthTokenRequest{
		Uses:                 1,
		ExpireTime:           now.Add(geminiTokenTTL).Format(time.RFC3339),
		NewSessionExpireTime: newSession.Format(time.RFC3339),
	}
	s := &body.BidiGenerateContentSetup
	s.Model = geminilive.ModelName(agent.Model)
	if text {
		// The same rule as a test run's: TEXT, unless the model speaks
		// only; then its transcription is the text the visitor reads.
		s.ReadAsText(geminilive.SpeaksOnly(agent.Model))
	} else {
		s.GenerationConfig.ResponseModalities = []string{"AUDIO"}
		s.GenerationConfig.SpeechConfig = geminilive.Voice(agent.Voice, agent.Language)
		s.InputAudioTranscription, s.OutputAudioTranscription = &struct{}{}, &struct{}{}
	}
	s.SystemInstruction = geminilive.Instructions(agent.Instructions)
	s.Tools = agentline.GeminiTools(tools)
	var out struct {
		Name string `json:"name"`
	}
	header := http.Header{"x-goog-api-key": {creds.APIKey}}
	if err := c.post(ctx, c.clientFor(creds), "Gemini-compatible", creds.BaseURL+"/v1alpha/auth_tokens", header, body, &out); err != nil {
		return Token{}, err
	}
	if !strings.HasPrefix(out.Name, "auth_tokens/") {
		return Token{}, providerError("Gemini-compatible", fmt.Errorf("answer has no auth_tokens/ name"))
	}
	return Token{Value: out.Name, ExpiresAt: newSession, URL: GeminiLiveURL(creds.BaseURL), Protocol: "websocket"}, nil
}

// GeminiLiveURL is the constrained Live API WebSocket of the provider at
// base; the browser adds ?access_token=<token>.
func GeminiLiveURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	if u.Scheme == "http" {
		u.Scheme = "ws"
	} else {
		u.Scheme = "wss"
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained"
	return u.String()
}

// clientFor is the HTTP client that reaches creds' base URL.
func (c *Client) clientFor(creds agentline.ProviderCredentials) *http.Client {
	if creds.Project && c.cfg.ProjectHTTP != nil {
		return c.cfg.ProjectHTTP
	}
	return c.http
}

func (c *Client) post(ctx context.Context, hc *http.Client, name, endpoint string, header http.Header, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return providerError(name, err)
	}
	for k, v := range header {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return providerError(name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return providerError(name, err)
	}
	if resp.StatusCode/100 != 2 {
		detail := withoutKey(string(raw[:min(len(raw), maxProviderErrorBody)]), header)
		return &agentline.Error{Code: agentline.EProvider,
			Message: fmt.Sprintf("the %s provider refused to start a session (status %d)", name, resp.StatusCode),
			Err:     fmt.Errorf("POST %s: %s: %s", endpoint, resp.Status, detail)}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return providerError(name, fmt.Errorf("decode answer: %w", err))
	}
	return nil
}

func providerError(name string, err error) error {
	return &agentline.Error{Code: agentline.EProvider, Message: fmt.Sprintf("the %s provider could not be reached or answered badly", name), Err: err}
}

// primaryLanguage is the language subtag of a BCP 47 tag ("en-US" -> "en").
func primaryLanguage(tag string) string {
	lang, _, _ := strings.Cut(tag, "-")
	return strings.ToLower(lang)
}

// withoutKey removes the request's key from a provider's answer before it
// is logged: a provider may repeat a refused key (OpenAI does, partly
// masked), and a project's own provider is whatever its owner named.
func withoutKey(text string, header http.Header) string {
	for name, vs := range header {
		if !strings.EqualFold(name, "Authorization") && !strings.EqualFold(name, "x-goog-api-key") || len(vs) == 0 {
			continue
		}
		k := strings.TrimPrefix(vs[0], "Bearer ")
		if len(k) < 8 {
			continue
		}
		for _, part := range []string{k, k[:len(k)-4], k[4:]} {
			text = strings.ReplaceAll(text, part, "[redacted]")
		}
	}
	return text
}
