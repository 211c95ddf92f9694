package campaign_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/store"
)

// clock is a test clock that runs at the real pace from a time a test sets,
// so that the engine's waits for its rate slots end.
type clock struct {
	mu          sync.Mutex
	base, since time.Time
}

func newClock(t time.Time) *clock { return &clock{base: t, since: time.Now()} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(time.Since(c.since))
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base, c.since = t, time.Now()
}

// dialed is one call the fake dialer placed.
type dialed struct {
	To     string
	At     time.Time // real time
	DialID int64
	CallID int64
}

// fakeDialer places calls as the phone channel does (a reserved record
// linked to the dial, then a carrier SID), and plays them: after ring, each
// ends as answer says, through the store's ApplyCallEvent and the
// conversation's follow-up, as the carrier's status callback would.
type fakeDialer struct {
	db     *store.DB
	from   string
	number int64
	ring   time.Duration
	// answer says how a call to a number ends: its final status and who
	// answered (machine detection's verdict, or "").
	answer func(to string) (status, answeredBy string)
	// refuse, when set, refuses a call with that error before reserving it.
	refuse func(to string) error
	// lateVerdict sends machine detection's verdict after the call's end,
	// as a loaded server can take the carrier's callbacks: the end carries
	// it (AnsweredBy on the final status callback), then the verdict's own
	// callback records it.
	lateVerdict bool

	mu         sync.Mutex
	calls      []dialed
	live, peak int
	ended      sync.WaitGroup
}

func (d *fakeDialer) Dial(ctx context.Context, r campaign.DialRequest) (agentline.Call, error) {
	if d.refuse != nil {
		if err := d.refuse(r.To); err != nil {
			return agentline.Call{}, err
		}
	}
	d.mu.Lock()
	n := len(d.calls)
	d.calls = append(d.calls, dialed{To: r.To, At: time.Now(), DialID: r.DialID})
	d.live++
	d.peak = max(d.peak, d.live)
	d.mu.Unlock()
	ref := fmt.Sprintf("ref%d-%d", r.DialID, n)
	call, err := d.db.ReserveDialCall(ctx, agentline.Call{ProjectID: r.ProjectID, AgentID: r.AgentID, NumberID: &d.number,
		CallSID: agentline.PendingCallSID(ref), Direction: agentline.CallOutbound, From: d.from, To: r.To,
		Status: agentline.CallQueued, StreamRef: ref}, 100000, r.DialID, r.Interval)
	if err == nil {
		call, err = d.db.AttachCallSID(ctx, r.ProjectID, call.ID, fmt.Sprintf("CA%032d", call.ID), agentline.CallQueued)
	}
	if err != nil {
		d.done()
		return call, err
	}
	d.mu.Lock()
	// The carrier is asked now, right after the reservation took the
	// campaign's send slot: this is the time the carrier would log.
	d.calls[n].CallID, d.calls[n].At = call.ID, time.Now()
	d.mu.Unlock()
	d.ended.Go(func() { d.play(call) })
	return call, nil
}

// play ends a call after the ring as answer says. The live count drops in
// the transaction that ends the call, before its commit frees the dial's
// slot, so that peak is the engine's true concurrency.
func (d *fakeDialer) play(call agentline.Call) {
	time.Sleep(d.ring)
	status, by := d.answer(call.To)
	ctx := context.Background()
	verdict := func() {
		if by == "" {
			return
		}
		if _, _, err := d.db.RecordAnsweredBy(ctx, call.ProjectID, call.CallSID, by); err != nil {
			panic(err)
		}
	}
	end := agentline.CallEvent{CallSID: call.CallSID, Status: status}
	if d.lateVerdict {
		end.AnsweredBy = by
		defer verdict()
	} else {
		verdict()
	}
	follow := func(ctx context.Context, tx agentline.ConversationTx, previous string, c agentline.Call) error {
		err := conversation.CallChanged(ctx, tx, previous, c)
		if agentline.CallStatusFinal(c.Status) {
			d.done()
		}
		return err
	}
	if _, err := d.db.ApplyCallEvent(ctx, end, follow); err != nil {
		panic(err)
	}
}

func (d *fakeDialer) done() {
	d.mu.Lock()
	d.live--
	d.mu.Unlock()
}

func (d *fakeDialer) log() []dialed {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]dialed(nil), d.calls...)
}

// byLastDigit answers as the sandbox's carrier: 7 a machine, 8 busy, 9
// nobody, any other a person.
func byLastDigit(to string) (string, string) {
	switch {
	case strings.HasSuffix(to, "7"):
		return agentline.CallCompleted, agentline.AnsweredByMachineStart
	case strings.HasSuffix(to, "8"):
		return agentline.CallBusy, ""
	case strings.HasSuffix(to, "9"):
		return agentline.CallNoAnswer, ""
	}
	return agentline.CallCompleted, agentline.AnsweredByHuman
}

// engineEnv is a project with an agent, its number and a campaign, an
// engine dialing through a fakeDialer on a test clock, and the jobs the
// store's writes enqueue (which nothing runs: tests run passes).
type engineEnv struct {
	db      *store.DB
	project int64
	agent   int64
	dialer  *fakeDialer
	clock   *clock
	engine  *campaign.Engine
	c       agentline.Campaign
}

func newEngineEnv(t *testing.T, db *store.DB, c agentline.Campaign, now time.Time) *engineEnv {
	t.Helper()
	ctx := context.Background()
	clk := newClock(now)
	db.SetOutbox(store.OutboxOptions{Enqueue: func(context.Context, *sql.Tx, []agentline.Job) error { return nil }})
	u, err := db.CreateUser(ctx, "owner@example.com", "unused-hash")
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreateProject(ctx, agentline.Project{Name: "shop"}, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ada", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	n, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550100", AgentID: &a.ID,
		Status: agentline.NumberActive, CarrierSID: "PN1"})
	if err != nil {
		t.Fatal(err)
	}
	e := &engineEnv{db: db, project: p.ID, agent: a.ID, clock: clk,
		dialer: &fakeDialer{db: db, from: n.PhoneNumber, number: n.ID, ring: 50 * time.Millisecond, answer: byLastDigit}}
	e.engine = campaign.NewEngine(campaign.EngineOptions{Store: db, Dialer: e.dialer, Now: e.clock.now,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	c.ProjectID, c.AgentID, c.Name = p.ID, a.ID, "Renewals"
	if e.c, err = db.CreateCampaign(ctx, c); err != nil {
		t.Fatal(err)
	}
	return e
}

// add adds contacts: each "number" or "number@zone".
func (e *engineEnv) add(t *testing.T, numbers ...string) {
	t.Helper()
	var cs []agentline.CampaignContact
	for _, n := range numbers {
		phone, tz, _ := strings.Cut(n, "@")
		cs = append(cs, agentline.CampaignContact{PhoneNumber: phone, Timezone: tz})
	}
	if _, _, _, err := e.db.AddContacts(context.Background(), e.project, e.c.ID, cs, 100000); err != nil {
		t.Fatal(err)
	}
}

func (e *engineEnv) transition(t *testing.T, from, to string) {
	t.Helper()
	if _, ok, err := e.db.TransitionCampaign(context.Background(), e.project, e.c.ID, []string{from}, to); err != nil || !ok {
		t.Fatalf("%s -> %s: %v %v", from, to, ok, err)
	}
}

// pass runs one pass of the engine over the campaign and waits for the
// calls it placed to end.
func (e *engineEnv) pass(t *testing.T, budget time.Duration) {
	t.Helper()
	if err := e.engine.Pass(context.Background(), e.project, e.c.ID, budget, nil); err != nil {
		t.Fatal(err)
	}
	e.dialer.ended.Wait()
}

func (e *engineEnv) contacts(t *testing.T) map[string]agentline.CampaignContact {
	t.Helper()
	list, err := e.db.CampaignContacts(context.Background(), e.project, e.c.ID, "", 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]agentline.CampaignContact{}
	for _, ct := range list {
		out[ct.PhoneNumber] = ct
	}
	return out
}

func (e *engineEnv) campaign(t *testing.T) agentline.Campaign {
	t.Helper()
	c, err := e.db.Campaign(context.Background(), e.project, e.c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// everyDay is a window open all week, all day.
var everyDay = agentline.CallingWindow{Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Start: "00:00", End: "24:00"}
