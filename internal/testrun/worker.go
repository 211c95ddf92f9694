// Package testrun plays an agent's test scenarios: a simulated person (the
// provider's text model, told the scenario's persona and goal) talks to the
// agent itself (its model in text modality over the realtime session it
// would use, with its real tools and knowledge base), and the transcript
// is judged against the scenario's success criteria with the analysis's
// prompt and schema. Each scenario of a run is a durable job
// (agentline.PlayTestScenario); the run completes, with its
// test_run.completed event, when its last scenario is stored. See
// docs/testing.md.
package testrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/analysis"
)

// Store is what the worker needs from storage.
type Store interface {
	AgentAtVersion(ctx context.Context, projectID, agentID int64, n int) (agentline.Agent, error)
	BeginTestPlay(ctx context.Context, projectID, resultID int64) (agentline.TestPlay, error)
	FinishTestPlay(ctx context.Context, projectID, resultID int64, r agentline.TestResult) (bool, error)
}

// Credentials are the base URL and key of a project's provider kind.
type Credentials interface {
	Credentials(ctx context.Context, projectID int64, kind agentline.Provider) (agentline.ProviderCredentials, error)
}

// Options configures a Worker.
type Options struct {
	Store Store
	// Analysis chooses the text model of the simulated person and the
	// judge, as the analysis worker does (its Analysts, Credentials and
	// ProjectAnalyst; the sandbox's deterministic rules in the sandbox).
	Analysis    analysis.Options
	Credentials Credentials
	Tools       ToolRunner
	// HTTP dials the deployment's provider; ProjectHTTP a project's own
	// account's base URL (it keeps to the outgoing address policy).
	HTTP, ProjectHTTP *http.Client
	// PerProject bounds the scenarios of one project played at once in
	// this instance (default 3); more wait their turn as snoozed jobs.
	PerProject int
	// MaxAttempts bounds the attempts at one scenario (default 3).
	MaxAttempts int
	Logger      *slog.Logger
}

// Worker is the worker of PlayTestScenario jobs.
type Worker struct {
	river.WorkerDefaults[agentline.PlayTestScenario]
	o       Options
	mu      sync.Mutex
	playing map[int64]int
}

// NewWorker returns a worker with o's defaults filled in.
func NewWorker(o Options) *Worker {
	if o.PerProject <= 0 {
		o.PerProject = 3
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{}
	}
	if o.ProjectHTTP == nil {
		o.ProjectHTTP = o.HTTP
	}
	return &Worker{o: o, playing: map[int64]int{}}
}

// MaxAttempts is how many times one scenario is attempted.
func (w *Worker) MaxAttempts() int { return w.o.MaxAttempts }

// NextRetry retries a failed attempt soon: a person waits on the run.
func (w *Worker) NextRetry(job *river.Job[agentline.PlayTestScenario]) time.Time {
	return time.Now().Add(time.Duration(job.Attempt) * 2 * time.Second)
}

// Work plays the job's scenario from its start and stores its result.
func (w *Worker) Work(ctx context.Context, job *river.Job[agentline.PlayTestScenario]) error {
	a := job.Args
	if !w.acquire(a.ProjectID) {
		return river.JobSnooze(time.Second)
	}
	defer w.release(a.ProjectID)
	p, err := w.o.Store.BeginTestPlay(ctx, a.ProjectID, a.ResultID)
	if agentline.ErrorCode(err) == agentline.ENotFound {
		return nil // the run was deleted with its project or agent
	}
	if err != nil || p.Status != agentline.TestResultPending {
		return err
	}
	log := w.o.Logger.With("project_id", a.ProjectID, "test_run_id", a.RunID, "scenario", p.Scenario.Name, "attempt", job.Attempt)
	res, err := w.play(ctx, p)
	if err != nil {
		var perm *analysis.PermanentError
		if !errors.As(err, &perm) && job.Attempt < job.MaxAttempts && ctx.Err() == nil {
			log.Warn("test scenario: attempt failed, playing it again", "err", err)
			return err
		}
		if ctx.Err() != nil {
			return err // cut short (a shutdown): played again after the restart
		}
		res.Status, res.Reason, res.Passed = agentline.TestResultError, err.Error(), nil
	}
	stored, err := w.o.Store.FinishTestPlay(context.WithoutCancel(ctx), a.ProjectID, a.ResultID, res)
	if err != nil {
		return fmt.Errorf("store test result: %w", err)
	}
	if stored {
		log.Info("test scenario played", "status", res.Status, "turns", res.Turns)
	}
	return nil
}

func (w *Worker) acquire(projectID int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.playing[projectID] >= w.o.PerProject {
		return false
	}
	w.playing[projectID]++
	return true
}

func (w *Worker) release(projectID int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.playing[projectID]--; w.playing[projectID] <= 0 {
		delete(w.playing, projectID)
	}
}

// Settings is the agent's settings a run plays: those of the version it
// was pinned to when it was made (its latest then, draft or not, unless
// it named one).
func (w *Worker) Settings(ctx context.Context, run agentline.TestRun) (agentline.Agent, error) {
	n := 0
	if run.Version != nil {
		n = *run.Version
	}
	return w.o.Store.AgentAtVersion(ctx, run.ProjectID, run.AgentID, n)
}
