package app

import (
	"context"
	"net/http"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/api"
	"github.com/agentline/agentline/internal/audit"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/campaign"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/form"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/mcpserver"
	"github.com/agentline/agentline/internal/provider"
	"github.com/agentline/agentline/internal/provideraccount"
	"github.com/agentline/agentline/internal/telephony"
	phonecarrier "github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/testrun"
	"github.com/agentline/agentline/internal/tools"
	"github.com/agentline/agentline/internal/webhooks"
	"github.com/agentline/agentline/internal/widget"
	"github.com/agentline/agentline/web"
)

// handlers are the HTTP handlers of every package, made by newHandlers.
type handlers struct {
	accounts      *auth.Handler // sign-in, accounts, invitations, administration
	api           *api.Handler
	toolAdmin     *tools.Handler // webhook tools and knowledge
	widget        *widget.Handler
	assets        *web.Assets
	phone         *telephony.Handler
	form          *form.Handler
	webhooks      *webhooks.Handler
	conversations *conversation.Handler
	campaigns     *campaign.Handler
	providers     *provideraccount.Handler
	tests         *testrun.Handler
	mcp           *mcpserver.Server
	audit         *audit.Handler
}

// newHandlers makes every package's handler from the foundation and the
// shared services; only loading the web assets can fail.
func (a *App) newHandlers(s shared) (handlers, error) {
	assets, err := web.Load()
	if err != nil {
		return handlers{}, err
	}
	// The Test panel on an agent's page talks to the providers directly.
	assets.AllowConnect(a.consoleConnect()...)
	// Each MCP tool call is a request to the API's own routes, on the mux
	// that serveMux makes once every handler is mounted.
	mcp, err := mcpserver.New(mcpserver.Options{Auth: a.Auth, Audit: a.Store, Logger: a.logger, Registerer: a.registry,
		API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) })})
	if err != nil {
		return handlers{}, err
	}
	convs := conversation.New(a.Store, a.Auth)
	if s.recordings != nil {
		convs.WithRecordings(s.recordings)
	}
	return handlers{
		accounts:  auth.NewHandler(a.Auth, a.features()).WithSSO(a.sso()),
		api:       api.New(a.Store, a.Auth),
		toolAdmin: tools.NewHandler(a.Store, a.Auth, a.Config.AllowPrivateWebhooks).WithMCP(a.Tools, a.Secrets),
		widget: widget.New(widget.Options{
			Store: a.Store, Auth: a.Auth, Limiter: s.limiter,
			Provider: provider.New(provider.Config{Credentials: widgetCredentials{s.providers}, ProjectHTTP: a.projectHTTP(15 * time.Second), Tracing: a.tracing}, nil),
			Tools:    a.Tools, PublicURL: a.Config.PublicURL, AllowPrivateWebhooks: a.Config.AllowPrivateWebhooks,
			Registerer: a.registry,
		}),
		assets: assets,
		phone:  s.phone,
		form: form.New(form.Options{
			Store: a.Store, Auth: a.Auth, Limiter: s.limiter, SubmitsPerMinute: a.Config.FormSubmitsPerMinute, Logger: a.logger,
		}),
		webhooks:      webhooks.NewHandler(a.Store, a.Auth, a.Config.AllowPrivateWebhooks),
		conversations: convs,
		campaigns:     campaign.New(a.Store, a.Auth),
		providers:     provideraccount.NewHandler(s.providers, a.Auth),
		tests:         testrun.NewHandler(a.Store, a.Auth),
		mcp:           mcp,
		audit:         audit.NewHandler(a.Store, a.Auth),
	}, nil
}

// realGeminiKey is a deployment's Gemini key as everything but phone calls
// sees it (browser sessions, analysis, the console's features): none when
// it is the sandbox's, whose pretend Gemini side answers phone calls' Live
// sockets only, with neither auth tokens nor generateContent
// (config.ApplySandbox). A widget session then says Gemini is not
// configured, and the sandbox analyst stands in for analysis.
func realGeminiKey(key string) string {
	if key == config.SandboxAPIKey {
		return ""
	}
	return key
}

// features are what the console shows or hides, as the settings have it.
func (a *App) features() auth.Features {
	return auth.Features{
		TelephonyEnabled: a.Config.TelephonyEnabled,
		OpenAIConfigured: a.Config.OpenAIAPIKey != "",
		GeminiConfigured: realGeminiKey(a.Config.GeminiAPIKey) != "",
		Sandbox:          a.Config.Sandbox,
		SandboxCarrier:   a.usesSandboxCarrier(),
	}
}

// phoneHandler is the phone channel's handler; without a carrier the
// routes that need one answer 503.
func (a *App) phoneHandler(s shared) *telephony.Handler {
	o := telephony.Options{
		Enabled: a.Config.TelephonyEnabled, Store: a.Store, Auth: a.Auth, Carrier: s.carrier,
		Secret: a.Secret, BotHost: a.Config.BotHost,
		Signatures:         a.carrierSignatures(s.carrierToken),
		MaxConcurrentCalls: int(a.Config.MaxConcurrentCalls),
		Tools:              a.Tools, Credentials: s.providers, AllowPrivate: a.Config.AllowPrivateWebhooks,
		MaxCallDuration: a.Config.MaxCallDuration, ModelReadyTimeout: a.Config.ModelReadyTimeout, Registerer: a.registry, Logger: a.logger,
		Tracing: a.tracing,
	}
	if s.carrier != nil {
		o.AnsweringMachine = campaign.NewVoicemail(a.Store, s.carrier, a.logger)
	}
	if s.recordings != nil {
		// Only when there are some: a typed nil in the interface would
		// look like recordings to the phone channel.
		o.Recordings = s.recordings
	}
	return telephony.New(o)
}

// carrierSignatures checks the carrier's requests with token in every
// environment, and says at start when they are not checked at all or when,
// with no token, every one of them will be refused.
func (a *App) carrierSignatures(token string) *phonecarrier.Signatures {
	switch {
	case a.Config.SkipCarrierSigs:
		a.logger.Warn("carrier signatures are NOT checked (AGENTLINE_SKIP_CARRIER_SIGNATURES=true): anyone who can reach this service can open calls to the model")
	case token == "" && a.Config.TelephonyEnabled:
		a.logger.Warn("TWILIO_AUTH_TOKEN is not set: every carrier webhook and media stream is refused (403)")
	}
	return phonecarrier.NewSignatures(token, a.Config.BotHost, a.Config.SkipCarrierSigs)
}

// projectHTTP is the HTTP client of requests to a project's own provider
// account: the tool facility's transport, which checks every address it
// dials against the outgoing address policy (unless
// AGENTLINE_ALLOW_PRIVATE_WEBHOOKS), with its own timeout.
func (a *App) projectHTTP(timeout time.Duration) *http.Client {
	c := a.Tools.Client()
	return httpx.TracedClient(&http.Client{Transport: c.Transport, CheckRedirect: c.CheckRedirect, Timeout: timeout}, a.tracing)
}

// consoleConnect are the origins the console page may connect to besides
// its own: the deployment's providers, for the agent page's Test panel. A
// project's own account may name any provider, and the console is one
// page for every project, served before anyone signs in, so its policy
// cannot list them (nor should it show one tenant's provider to all):
// while accounts can be saved (an encryption key is set), it admits any
// https and wss origin (in production base URLs must be https), and in
// development any http and ws origin too. Scripts stay limited to the
// console's own.
func (a *App) consoleConnect() []string {
	out := []string{a.Config.OpenAIBaseURL, a.Config.GeminiBaseURL}
	if a.Secrets == nil {
		return out
	}
	out = append(out, "https:", "wss:")
	if !a.Config.Production() {
		out = append(out, "http:", "ws:")
	}
	return out
}

// widgetCredentials are the provider credentials of browser sessions: the
// project's own account's, or the deployment's with its realGeminiKey.
type widgetCredentials struct{ *provideraccount.Accounts }

func (w widgetCredentials) Credentials(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error) {
	c, err := w.Accounts.Credentials(ctx, projectID, kind)
	if err == nil && kind == agentline.ProviderGemini && !c.Project {
		c.APIKey = realGeminiKey(c.APIKey)
	}
	return c, err
}
