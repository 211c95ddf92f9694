package analysis

import (
	"context"
	"net/http"
	"time"

	"github.com/agentline/agentline"
)

// Credentials are the base URL and key of a project's provider kind: its
// own provider account's (Project set), or the deployment's.
type Credentials interface {
	Credentials(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error)
}

// analyst is who analyses a conversation of the project's agent of kind:
// the project's own account, when it has one, else the deployment's
// analyst (or the sandbox) of Analysts. A key that no longer opens fails
// the analysis at once: another attempt would not open it either.
func (w *Worker) analyst(ctx context.Context, projectID int64, kind agentline.Provider) (Analyst, error) {
	return Choose(ctx, w.o, projectID, kind)
}

// Choose picks the analyst of a project's agent of kind from o's
// Analysts, Credentials and ProjectAnalyst, as the analysis worker does
// (nil: none is configured). Test runs ask their text model through it,
// so they use a project's own account too.
func Choose(ctx context.Context, o Options, projectID int64, kind agentline.Provider) (Analyst, error) {
	if o.Credentials == nil || o.ProjectAnalyst == nil {
		return o.Analysts[kind], nil
	}
	c, err := o.Credentials.Credentials(ctx, projectID, kind)
	if agentline.ErrorCode(err) == agentline.ENotConfigured {
		return nil, &PermanentError{err}
	}
	if err != nil {
		return nil, err
	}
	if !c.Project {
		return o.Analysts[kind], nil
	}
	return o.ProjectAnalyst(kind, c), nil
}

// NewProjectAnalyst returns the maker of a project's own account's
// analysts, with the models and ProjectHTTP client of o (its base URLs and
// keys are not used).
func NewProjectAnalyst(o AnalystOptions) func(kind agentline.Provider, c agentline.ProviderCredentials) Analyst {
	hc := o.ProjectHTTP
	if hc == nil {
		hc = &http.Client{Timeout: 50 * time.Second}
	}
	return func(kind agentline.Provider, c agentline.ProviderCredentials) Analyst {
		if kind == agentline.ProviderGemini {
			return &Gemini{BaseURL: c.BaseURL, APIKey: c.APIKey, ModelName: o.GeminiModel, HTTP: hc}
		}
		return &OpenAI{BaseURL: c.BaseURL, APIKey: c.APIKey, ModelName: o.OpenAIModel, HTTP: hc}
	}
}
