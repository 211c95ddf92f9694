package livecall

import (
	"context"

	"github.com/agentline/agentline"
)

// Credentials are the base URL and key of a project's provider kind: its
// own provider account's, or the deployment's.
type Credentials interface {
	Credentials(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error)
}

// deployment is the deployment's one account of each kind, for every
// project: what Options' base URLs and keys give without
// Options.Credentials.
type deployment map[agentline.Provider]agentline.ProviderCredentials

func (d deployment) Credentials(_ context.Context, _ int64, kind agentline.Provider) (agentline.ProviderCredentials, error) {
	return d[kind], nil
}

func credentialsOf(o Options) Credentials {
	if o.Credentials != nil {
		return o.Credentials
	}
	return deployment{
		agentline.ProviderOpenAI: {BaseURL: o.OpenAIBaseURL, APIKey: o.OpenAIAPIKey},
		agentline.ProviderGemini: {BaseURL: o.GeminiBaseURL, APIKey: o.GeminiAPIKey},
	}
}

// Credentials are the base URL and key the project's calls of kind reach
// the model with: read once at a call's start, never per frame.
func (h *Handler) Credentials(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error) {
	return h.creds.Credentials(ctx, projectID, kind)
}
