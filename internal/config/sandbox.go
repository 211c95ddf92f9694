package config

// DefaultSandbox turns the sandbox provider on for a first run that would
// otherwise have no model to talk to: in development, with no
// OPENAI_API_KEY, and when neither AGENTLINE_SANDBOX nor --sandbox was
// given (AGENTLINE_SANDBOX=false keeps it off). It reports whether it
// turned the sandbox on. Production is never changed. `agentline serve`
// calls it; Load does not, so tests and other commands get exactly the
// settings they ask for.
func (c *Config) DefaultSandbox() bool {
	if c.Production() || c.sandboxSet || c.Sandbox || c.OpenAIAPIKey != "" {
		return false
	}
	c.Sandbox = true
	return true
}
