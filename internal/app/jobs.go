package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/analysis"
	"github.com/agentline/agentline/internal/audit"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/campaign"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/form"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/mail"
	"github.com/agentline/agentline/internal/recording"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony"
	"github.com/agentline/agentline/internal/testrun"
	"github.com/agentline/agentline/internal/webhooks"
)

// jobQueue migrates River's tables, builds the durable job queue with the
// workers of every job kind (the mail workers when sender is not nil), and
// connects the store's outbox to it.
func (a *App) jobQueue(ctx context.Context, s shared, sender *mail.Sender) error {
	dialect := string(a.Store.Dialect())
	if err := jobs.Migrate(ctx, dialect, a.Store.JobPool(), a.Store.MigrationLock); err != nil {
		return err
	}
	r := jobs.NewRegistry()
	backoff, err := a.Config.NotifyBackoff() // checked by config.Validate
	if err != nil {
		return err
	}
	notifier := form.NewNotifier(form.NotifierOptions{Client: a.Tools.Client(), Logger: a.logger, Attempts: a.Store, Backoff: backoff})
	jobs.Add(r, notifier, notifier.MaxAttempts())
	jobs.Add(r, webhooks.NewDeliverer(webhooks.DelivererOptions{Store: a.Store, Client: a.Tools.Client(), Logger: a.logger,
		Span: a.Config.WebhookRetrySpan, Registerer: a.registry}), 25)
	jobs.AddCoalescing(r, &webhooks.Dispatcher{Store: a.Store, Logger: a.logger}, 10, webhooks.DispatchInterval, agentline.DispatchWebhooks{})
	pruner := &webhooks.Pruner{Store: a.Store, Retention: a.Config.WebhookRetention, Logger: a.logger}
	jobs.AddPeriodic(r, pruner, pruner.Interval(), agentline.PruneWebhooks{})
	auditPruner := &audit.Pruner{Store: a.Store, RetentionDays: int(a.Config.AuditRetentionDays), Logger: a.logger}
	jobs.AddPeriodic(r, auditPruner, auditPruner.Interval(), agentline.PruneAuditLog{})
	sweeper := &conversation.Sweeper{Store: a.Store, IdleTimeout: a.Config.SessionIdleTimeout,
		ConnectTimeout: a.Config.LiveChatTimeout, Logger: a.logger}
	jobs.AddPeriodic(r, sweeper, sweeper.Interval(), agentline.SweepConversations{})
	// A nil carrier converts to a nil CallFetcher: nobody to ask.
	a.reconciler = &telephony.Reconciler{Store: a.Store, Carrier: s.carrier, After: a.Config.CallReconcileAfter, Logger: a.logger}
	jobs.AddPeriodic(r, a.reconciler, a.reconciler.Interval(), agentline.ReconcileCalls{})
	ao := analysis.AnalystOptions{Sandbox: a.Config.Sandbox,
		OpenAIBaseURL: a.Config.OpenAIBaseURL, OpenAIAPIKey: a.Config.OpenAIAPIKey, OpenAIModel: a.Config.AnalysisModelOpenAI,
		GeminiBaseURL: a.Config.GeminiBaseURL, GeminiAPIKey: realGeminiKey(a.Config.GeminiAPIKey), GeminiModel: a.Config.AnalysisModelGemini,
		ProjectHTTP: a.projectHTTP(50 * time.Second), HTTP: a.providerHTTP(50 * time.Second)}
	analysts := analysis.Options{Store: a.Store, Logger: a.logger,
		MaxAttempts: int(a.Config.AnalysisMaxAttempts), Backoff: a.Config.AnalysisRetryBackoff,
		Analysts: analysis.NewAnalysts(ao), Credentials: s.providers, ProjectAnalyst: analysis.NewProjectAnalyst(ao)}
	analyst := analysis.NewWorker(analysts)
	jobs.Add(r, analyst, analyst.MaxAttempts())
	tester := testrun.NewWorker(testrun.Options{Store: a.Store, Analysis: analysts, Credentials: s.providers, Tools: a.Tools,
		HTTP: &http.Client{}, ProjectHTTP: a.projectHTTP(0), Logger: a.logger})
	jobs.Add(r, tester, tester.MaxAttempts())
	a.campaignJobs(r, s)
	jobs.Add(r, &recording.Purger{Calls: s.recordings}, 10)
	a.mailJobs(r, sender)
	if s.recordings != nil {
		jobs.Add(r, &recording.Uploader{Calls: s.recordings, MaxAttempts: 20}, 20)
		jobs.AddPeriodic(r, &recording.Retention{Calls: s.recordings}, recording.RetentionInterval, agentline.SweepRecordings{})
	}
	q, err := jobs.New(jobs.Options{Pool: a.Store.JobPool(), Dialect: dialect, Logger: a.logger, Registerer: a.registry,
		RescueAfter: a.Config.JobRescueAfter, Tracing: a.tracing}, r)
	if err != nil {
		return err
	}
	a.jobs = q
	a.Store.SetOutbox(store.OutboxOptions{Enqueue: q.EnqueueTx, DeliverySpan: a.Config.WebhookRetrySpan})
	return nil
}

// campaignJobs registers the campaign engine: the DialCampaign worker (one
// job per campaign at a time) and the SweepCampaigns sweep. Calls go out
// through the phone channel, so they count against the project's live-call
// cap; recovery waits past twice the carrier's timeout, so that a request
// still in flight is never taken for a lost one.
func (a *App) campaignJobs(r *jobs.Registry, s shared) {
	o := campaign.EngineOptions{Store: a.Store, Dialer: phoneDialer{s.phone, a.logger}, Logger: a.logger,
		RecoverAfter: max(2*a.Config.TwilioTimeout, 10*time.Second)}
	if s.carrier != nil {
		o.Carrier = s.carrier
	}
	e := campaign.NewEngine(o)
	jobs.AddCoalescingByArgs(r, e, 10)
	sweeper := e.Sweeper()
	jobs.AddPeriodicWhen(r, sweeper, campaign.SweepInterval, agentline.SweepCampaigns{}, sweeper.Due)
}

// phoneDialer places the campaign engine's calls with the phone channel's
// PlaceCall, which logs to the app's logger as it does for a request.
type phoneDialer struct {
	phone  *telephony.Handler
	logger *slog.Logger
}

func (d phoneDialer) Dial(ctx context.Context, r campaign.DialRequest) (agentline.Call, error) {
	ctx = httpx.WithLogger(ctx, d.logger)
	return d.phone.PlaceCall(ctx, r.ProjectID, r.AgentID, r.To, telephony.CallOptions{MachineDetection: r.MachineDetection, Dial: r.DialID,
		Interval: r.Interval})
}

// mailJobs registers the workers that email invitations and reset links
// through sender, when AGENTLINE_SMTP_URL is set (sender is not nil).
func (a *App) mailJobs(r *jobs.Registry, sender *mail.Sender) {
	if sender == nil {
		return
	}
	m := &auth.Mailer{Store: a.Store, Sender: sender, BaseURL: a.Config.BaseURL(), Service: a.Auth}
	jobs.Add(r, m.Invitations(), auth.MailAttempts)
	jobs.Add(r, m.Resets(), auth.MailAttempts)
}

// stopJobs lets the jobs running finish within the shutdown timeout; those
// cut short run again later.
func (a *App) stopJobs() {
	ctx, cancel := context.WithTimeout(context.Background(), a.Config.ShutdownTimeout)
	defer cancel()
	if err := a.jobs.Stop(ctx); err != nil {
		a.logger.Warn("stop job queue", "err", err)
	}
}
