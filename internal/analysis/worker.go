// Package analysis analyses conversations after they end: a durable job
// (agentline.AnalyzeConversation, enqueued in the transaction that ends
// the conversation) sends the transcript to the agent's provider's text
// API with structured output (OpenAI's Responses API, Gemini's
// generateContent), checks the answer against the JSON Schema built from
// the agent's analysis settings, and stores it with its
// conversation.analyzed event. See docs/analysis.md.
package analysis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
)

// Store is what the worker needs from storage.
type Store interface {
	Conversation(ctx context.Context, projectID int64, id string) (agentline.Conversation, error)
	// AgentAtVersion is the agent as the conversation ran it (0: the
	// latest, for one from before versions began).
	AgentAtVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.Agent, error)
	NoteAnalysisAttempt(ctx context.Context, projectID int64, id, reason string) error
	FinishAnalysis(ctx context.Context, projectID int64, id string, a agentline.Analysis) (bool, error)
}

// Options configures a Worker.
type Options struct {
	Store Store
	// Analysts answers for each provider kind; a kind missing here fails
	// its agents' analyses ("not configured"). See NewAnalysts.
	Analysts map[agentline.Provider]Analyst
	// Credentials, when set, is asked for each analysis's project: a
	// project with its own provider account is analysed on it
	// (ProjectAnalyst); the others by Analysts.
	Credentials Credentials
	// ProjectAnalyst makes the analyst of a project's own account (see
	// NewProjectAnalyst); needed with Credentials.
	ProjectAnalyst func(kind agentline.Provider, c agentline.ProviderCredentials) Analyst
	// MaxAttempts bounds the attempts of one analysis (default 5).
	MaxAttempts int
	// Backoff is the wait after the first failed attempt; it doubles after
	// each (±10 %), up to an hour (default 30 s).
	Backoff time.Duration
	Logger  *slog.Logger
}

// Worker is the worker of AnalyzeConversation jobs.
type Worker struct {
	river.WorkerDefaults[agentline.AnalyzeConversation]
	o Options
}

// NewWorker returns a worker with o's defaults filled in.
func NewWorker(o Options) *Worker {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Worker{o: o}
}

// MaxAttempts is how many times one analysis is attempted.
func (w *Worker) MaxAttempts() int { return w.o.MaxAttempts }

// NextRetry is River's retry schedule for a failed attempt: Backoff,
// doubled after each attempt, with jitter.
func (w *Worker) NextRetry(job *river.Job[agentline.AnalyzeConversation]) time.Time {
	d := w.o.Backoff << min(max(job.Attempt-1, 0), 20)
	d = min(d, time.Hour)
	return time.Now().Add(d + time.Duration((rand.Float64()*0.2-0.1)*float64(d)))
}

// Work makes one attempt at the job's analysis.
func (w *Worker) Work(ctx context.Context, job *river.Job[agentline.AnalyzeConversation]) error {
	a := job.Args
	log := w.o.Logger.With("conversation_id", a.ConversationID, "project_id", a.ProjectID, "attempt", job.Attempt)
	conv, err := w.o.Store.Conversation(ctx, a.ProjectID, a.ConversationID)
	if agentline.ErrorCode(err) == agentline.ENotFound {
		return nil // deleted meanwhile: nothing to analyse
	}
	if err != nil {
		return err
	}
	if conv.Analysis == nil || conv.Analysis.Status != agentline.AnalysisPending {
		return nil // another run stored it
	}
	result, err := w.analyze(ctx, conv)
	if err != nil {
		var perm *PermanentError
		if !errors.As(err, &perm) && job.Attempt < job.MaxAttempts {
			log.Warn("analysis: attempt failed, retrying", "err", err)
			if nerr := w.o.Store.NoteAnalysisAttempt(ctx, a.ProjectID, a.ConversationID, err.Error()); nerr != nil {
				log.Warn("analysis: could not note the attempt", "err", nerr)
			}
			return err
		}
		log.Error("analysis failed", "err", err)
		result = agentline.Analysis{Status: agentline.AnalysisFailed, Error: err.Error(), Model: result.Model}
	}
	stored, err := w.o.Store.FinishAnalysis(ctx, a.ProjectID, a.ConversationID, result)
	if err != nil {
		return fmt.Errorf("store analysis: %w", err)
	}
	if stored {
		log.Info("conversation analysed", "status", result.Status, "model", result.Model)
	}
	return nil
}

// analyze runs the analysis of conv: skipped when the user said nothing,
// else the agent's provider's answer, checked against the schema.
func (w *Worker) analyze(ctx context.Context, conv agentline.Conversation) (agentline.Analysis, error) {
	if !userSpoke(conv.Transcript) {
		return agentline.Analysis{Status: agentline.AnalysisSkipped}, nil
	}
	version := 0
	if conv.AgentVersion != nil {
		version = *conv.AgentVersion
	}
	agent, err := w.o.Store.AgentAtVersion(ctx, conv.ProjectID, conv.AgentID, version)
	if agentline.ErrorCode(err) == agentline.ENotFound {
		return agentline.Analysis{}, &PermanentError{errors.New("the agent was deleted")}
	}
	if err != nil {
		return agentline.Analysis{}, err
	}
	analyst, err := w.analyst(ctx, conv.ProjectID, agent.Provider)
	if err != nil {
		return agentline.Analysis{}, err
	}
	if analyst == nil {
		return agentline.Analysis{}, &PermanentError{fmt.Errorf("no %s provider is configured for analysis (its API key is not set)", agent.Provider)}
	}
	schema, err := AnswerSchema(agent.Analysis)
	if err != nil {
		return agentline.Analysis{}, &PermanentError{err}
	}
	v, err := newValidator(schema)
	if err != nil {
		return agentline.Analysis{}, &PermanentError{err}
	}
	text, err := analyst.Analyze(ctx, Request{Instructions: instructions(agent), Transcript: transcript(conv), Schema: schema, Lines: conv.Transcript})
	if err != nil {
		return agentline.Analysis{Model: analyst.Model()}, err
	}
	ans, err := v.check(text)
	if err != nil {
		return agentline.Analysis{Model: analyst.Model()}, err
	}
	return agentline.Analysis{Status: agentline.AnalysisDone, Summary: ans.Summary, Success: ans.Success,
		SuccessReason: ans.SuccessReason, Data: ans.Data, Model: analyst.Model()}, nil
}

// userSpoke reports whether the user (visitor or caller) said anything.
func userSpoke(lines []agentline.Line) bool {
	for _, l := range lines {
		if l.Speaker == "user" && strings.TrimSpace(l.Text) != "" {
			return true
		}
	}
	return false
}

// AnalystOptions are the providers' settings for NewAnalysts.
type AnalystOptions struct {
	OpenAIBaseURL, OpenAIAPIKey, OpenAIModel string
	GeminiBaseURL, GeminiAPIKey, GeminiModel string
	// Sandbox answers for OpenAI-kind agents (the sandbox replaces the
	// OpenAI provider), and for Gemini-kind agents when GEMINI_API_KEY is
	// not set.
	Sandbox bool
	HTTP    *http.Client
	// ProjectHTTP reaches a project's own account's base URL: a client
	// that keeps to the outgoing address policy (NewProjectAnalyst).
	ProjectHTTP *http.Client
}

// NewAnalysts chooses the analyst of each provider kind: this is where the
// sandbox stands in for a provider with no key.
func NewAnalysts(o AnalystOptions) map[agentline.Provider]Analyst {
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 50 * time.Second}
	}
	out := map[agentline.Provider]Analyst{}
	switch {
	case o.Sandbox:
		out[agentline.ProviderOpenAI] = Sandbox{}
	case o.OpenAIAPIKey != "":
		out[agentline.ProviderOpenAI] = &OpenAI{BaseURL: o.OpenAIBaseURL, APIKey: o.OpenAIAPIKey, ModelName: o.OpenAIModel, HTTP: o.HTTP}
	}
	switch {
	case o.GeminiAPIKey != "":
		out[agentline.ProviderGemini] = &Gemini{BaseURL: o.GeminiBaseURL, APIKey: o.GeminiAPIKey, ModelName: o.GeminiModel, HTTP: o.HTTP}
	case o.Sandbox:
		out[agentline.ProviderGemini] = Sandbox{}
	}
	return out
}
