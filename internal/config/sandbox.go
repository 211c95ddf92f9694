package config

// SandboxAPIKey is the provider key agentline uses for the sandbox
// provider, and the only one that provider takes. It is defined here, the
// one place, because the sandbox's settings are computed here
// (ApplySandbox); internal/provider/sandbox names it as its APIKey.
const SandboxAPIKey = "sk-sandbox"

// SandboxPath is where the sandbox provider is served: OPENAI_BASE_URL's
// path in sandbox mode.
const SandboxPath = "/sandbox/openai"

// SandboxGeminiPath is where the sandbox's Gemini side (the Live API
// WebSocket of phone calls) is served: GEMINI_BASE_URL's path in sandbox
// mode when no GEMINI_API_KEY is set.
const SandboxGeminiPath = "/sandbox/gemini"

// ApplySandbox points the OpenAI-compatible provider at the sandbox
// provider when the sandbox is on: OPENAI_BASE_URL becomes BaseURL +
// SandboxPath and OPENAI_API_KEY the sandbox key, so that everything built
// from the settings (widget, phone calls, analysis, the console's allowed
// connections) talks to it. Load applies it before validating, and
// DefaultSandbox when it turns the sandbox on. It is computed from Addr
// and PublicURL each time, so applying it again after either changed
// (app.New does, as tests listen on a port of their own) gives the right
// URL, and applying it twice changes nothing.
func (c *Config) ApplySandbox() {
	if !c.Sandbox {
		return
	}
	c.OpenAIBaseURL = c.BaseURL() + SandboxPath
	c.OpenAIAPIKey = SandboxAPIKey
	// A real Gemini key is kept: DefaultSandbox turns the sandbox on for
	// want of an OpenAI key alone. Without one, Gemini-kind agents' phone
	// calls talk to the sandbox too (it answers the Live socket only, not
	// the widget's auth tokens).
	if c.GeminiAPIKey == "" || c.GeminiAPIKey == SandboxAPIKey {
		c.GeminiBaseURL = c.BaseURL() + SandboxGeminiPath
		c.GeminiAPIKey = SandboxAPIKey
	}
}

// DefaultSandbox turns the sandbox provider on for a first run that would
// otherwise have no model to talk to: in development, with no
// OPENAI_API_KEY, and when neither AGENTLINE_SANDBOX nor --sandbox was
// given (AGENTLINE_SANDBOX=false keeps it off). It reports whether it
// turned the sandbox on, and then applies the sandbox's settings
// (ApplySandbox). Production is never changed. `agentline serve` calls it;
// Load does not, so tests and other commands get exactly the settings they
// ask for.
func (c *Config) DefaultSandbox() bool {
	if c.Production() || c.sandboxSet || c.Sandbox || c.OpenAIAPIKey != "" {
		return false
	}
	c.Sandbox = true
	c.ApplySandbox()
	return true
}
