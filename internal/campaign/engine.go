package campaign

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/telephony/carrier"
)

// EngineStore is what the dialing engine needs from storage. Every write
// that decides a dial is one transaction of the store's (see ClaimDial),
// so instances share a campaign without a coordinator.
type EngineStore interface {
	Campaign(ctx context.Context, projectID, id int64) (agentline.Campaign, error)
	RunningCampaigns(ctx context.Context) ([]agentline.Campaign, error)
	DueContacts(ctx context.Context, projectID, campaignID int64, now time.Time, limit int) ([]agentline.CampaignContact, error)
	DeferContacts(ctx context.Context, projectID, campaignID int64, until map[int64]time.Time) error
	ClaimDial(ctx context.Context, cl agentline.DialClaim) (agentline.DialClaimed, error)
	UnclaimDial(ctx context.Context, projectID, dialID int64) (bool, error)
	SettleDial(ctx context.Context, projectID, dialID int64, decide func(agentline.CampaignCall) (agentline.DialSettlement, bool)) (bool, error)
	FinishDialPass(ctx context.Context, projectID, campaignID int64, now time.Time, wake bool,
		finish func(ctx context.Context, tx *sql.Tx) error) (bool, error)

	// The sweep and recovery (engine_sweep.go).
	CampaignsToSweep(ctx context.Context) (bool, error)
	StaleDials(ctx context.Context, before time.Time, limit int) ([]agentline.StaleDial, error)
	ProjectOfCall(ctx context.Context, callSID string) (int64, error)
	AttachCallSID(ctx context.Context, projectID, callID int64, callSID, status string) (agentline.Call, error)
	RecordAnsweredBy(ctx context.Context, projectID int64, callSID, answeredBy string) (agentline.Call, bool, error)
	ApplyCallEvent(ctx context.Context, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error)
}

// DialRequest is one campaign call to place.
type DialRequest struct {
	ProjectID, AgentID int64
	To                 string
	// MachineDetection is carrier.AMDEnable (to hang up on machines) or
	// carrier.AMDDetectMessageEnd (to leave a message after the beep).
	MachineDetection string
	// DialID is the dial the call is for: the call's reserved record is
	// linked to it before the carrier is asked.
	DialID int64
	// Interval is the campaign's time between two requests at the
	// carrier: the call's reservation takes the campaign's send slot
	// (store.ReserveDialCall) and the request goes out right after.
	Interval time.Duration
}

// Dialer places the engine's calls: the phone channel's PlaceCall (with
// its project-wide cap on live calls), which the app adapts. It is a
// small interface of the engine's own because the phone channel's live
// path fills campaign variables with this package.
type Dialer interface {
	Dial(ctx context.Context, r DialRequest) (agentline.Call, error)
}

// Carrier is what the engine and Voicemail ask the carrier directly: to
// hang up on a machine, to speak a voicemail, and, in recovery, which
// calls it placed.
type Carrier interface {
	HangUp(ctx context.Context, callSID string) (string, error)
	Redirect(ctx context.Context, callSID, twiml string) error
	FindCalls(ctx context.Context, from, to string, after time.Time) ([]carrier.FoundCall, error)
}

// EngineOptions configure an Engine.
type EngineOptions struct {
	Store  EngineStore
	Dialer Dialer
	// Carrier is nil without a carrier account: no call can be placed, and
	// recovery has nobody to ask.
	Carrier Carrier
	// Now is the clock of windows, dials and retries; time.Now when nil.
	// Waits (for the next rate slot) are measured on it too, so a test
	// clock must move.
	Now    func() time.Time
	Logger *slog.Logger
	// RecoverAfter is how old a dial whose call never reached the
	// carrier's books must be before recovery settles it (see sweep.go):
	// longer than a carrier request may take. Default 1 minute.
	RecoverAfter time.Duration
	// PassBudget is how long one DialCampaign job dials before it hands
	// over to the next (default 20 s, under the job queue's timeout).
	PassBudget time.Duration
}

// Engine dials campaigns: it is the worker of DialCampaign jobs and makes
// the SweepCampaigns worker (Sweeper). Voicemail hears what answered its
// calls.
type Engine struct {
	river.WorkerDefaults[agentline.DialCampaign]
	store        EngineStore
	dialer       Dialer
	carrier      Carrier
	now          func() time.Time
	log          *slog.Logger
	recoverAfter time.Duration
	passBudget   time.Duration
}

// NewEngine returns an engine with o's dependencies.
func NewEngine(o EngineOptions) *Engine {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RecoverAfter <= 0 {
		o.RecoverAfter = time.Minute
	}
	if o.PassBudget <= 0 {
		o.PassBudget = 20 * time.Second
	}
	return &Engine{store: o.Store, dialer: o.Dialer, carrier: o.Carrier, now: o.Now, log: o.Logger,
		recoverAfter: o.RecoverAfter, passBudget: o.PassBudget}
}

// Work runs one pass over the job's campaign. The pass's last look for
// due contacts is made in the transaction that completes the job
// (jobs.CompleteTx): the job queue keeps one DialCampaign per campaign
// waiting or running, so a wake inserted while this one runs would be
// dropped; completed first, it is not, and work left after the look is
// woken there.
func (e *Engine) Work(ctx context.Context, j *river.Job[agentline.DialCampaign]) error {
	return e.Pass(ctx, j.Args.ProjectID, j.Args.CampaignID, e.passBudget, func(ctx context.Context, tx *sql.Tx) error {
		return jobs.CompleteTx(ctx, tx, j)
	})
}

// batchSize is how many due contacts a pass reads at a time.
const batchSize = 50

// Pass dials a campaign's due contacts for up to budget: contacts outside
// their window are moved to when it opens, the others are claimed one by
// one at the campaign's rate and called, until none is due, the campaign
// has max_concurrent_calls live, it stops running, the project's cap on
// live calls refuses a call, or the budget is spent. Then, in one
// transaction, finish runs (when not nil) and the campaign is completed
// if nobody is left, or woken again if contacts are due and it has room
// (not after a refusal: the sweep comes back to it).
func (e *Engine) Pass(ctx context.Context, projectID, campaignID int64, budget time.Duration,
	finish func(ctx context.Context, tx *sql.Tx) error) error {
	p := &pass{e: e, projectID: projectID, campaignID: campaignID, deadline: time.Now().Add(budget)}
	stop := p.run(ctx)
	p.dials.Wait()
	wake := stop != stopNotRunning && !p.refused.Load() && ctx.Err() == nil
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, err := e.store.FinishDialPass(fctx, projectID, campaignID, e.now(), wake, finish)
	return err
}

// pass is one Pass in progress.
type pass struct {
	e                     *Engine
	projectID, campaignID int64
	deadline              time.Time
	dials                 sync.WaitGroup // the calls being placed
	// refused is set when the phone channel refused a call for now (the
	// project's live calls at their cap, a draining instance).
	refused atomic.Bool
}

// Why a pass stopped.
type stopReason int

const (
	stopIdle       stopReason = iota // nothing due now
	stopFull                         // max_concurrent_calls live
	stopNotRunning                   // paused, cancelled, completed, deleted
	stopBudget                       // the budget is spent (or ctx ended)
	stopRefused                      // the phone channel refuses calls for now
)

// run dials batch after batch until a batch says to stop.
func (p *pass) run(ctx context.Context) stopReason {
	for ctx.Err() == nil && time.Now().Before(p.deadline) {
		c, err := p.e.store.Campaign(ctx, p.projectID, p.campaignID)
		if errors.Is(err, agentline.ErrNotFound) || err == nil && c.Status != agentline.CampaignRunning {
			return stopNotRunning
		}
		if err != nil {
			p.e.log.Warn("campaign engine: could not read the campaign", "campaign_id", p.campaignID, "err", err)
			return stopBudget
		}
		if stop, more := p.batch(ctx, c); !more {
			return stop
		}
	}
	return stopBudget
}

// batch reads due contacts, defers those outside their window and dials
// the rest; more is true when the next batch may find work.
func (p *pass) batch(ctx context.Context, c agentline.Campaign) (stop stopReason, more bool) {
	now := p.e.now()
	due, err := p.e.store.DueContacts(ctx, p.projectID, p.campaignID, now, batchSize)
	if err != nil {
		p.e.log.Warn("campaign engine: could not read due contacts", "campaign_id", p.campaignID, "err", err)
		return stopBudget, false
	}
	if len(due) == 0 {
		return stopIdle, false
	}
	open, later := p.e.sortByWindow(c, due, now)
	if err := p.e.store.DeferContacts(ctx, p.projectID, p.campaignID, later); err != nil {
		p.e.log.Warn("campaign engine: could not defer contacts", "campaign_id", p.campaignID, "err", err)
		return stopBudget, false
	}
	for _, ct := range open {
		if stop, ok := p.dialOne(ctx, c, ct); !ok {
			return stop, false
		}
		if p.refused.Load() {
			return stopRefused, false
		}
	}
	return stopIdle, true
}
