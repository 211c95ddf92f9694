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

// deployment is the deployment's one OpenAI-compatible account, for every
// project: what Options.OpenAIBaseURL and OpenAIAPIKey give without
// Options.Credentials.
type deployment agentline.ProviderCredentials

func (d deployment) Credentials(_ context.Context, _ int64, kind agentline.Provider) (agentline.ProviderCredentials, error) {
	if kind != agentline.ProviderOpenAI {
		return agentline.ProviderCredentials{}, nil
	}
	return agentline.ProviderCredentials(d), nil
}

func credentialsOf(o Options) Credentials {
	if o.Credentials != nil {
		return o.Credentials
	}
	return deployment{BaseURL: o.OpenAIBaseURL, APIKey: o.OpenAIAPIKey}
}

// Credentials are the base URL and key the project's calls of kind reach
// the model with: read once at a call's start, never per frame.
func (h *Handler) Credentials(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error) {
	return h.creds.Credentials(ctx, projectID, kind)
}
