package telephony

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// opsEnv is what the operations' table tests need, without an HTTP server
// of agentline's own: a migrated SQLite store, a fake Twilio on loopback
// and a Handler over both.
type opsEnv struct {
	db    *store.DB
	store *faultyStore
	fake  *twiliofake.Fake
	h     *Handler

	project, otherProject int64
	ada, bob, gem, eve    int64 // ada, bob (OpenAI) and gem (Gemini) in project; eve in otherProject
}

// faultyStore is the real store with writes that can be made to fail, for
// the clean-up paths after the carrier has acted.
type faultyStore struct {
	Store
	// createNumber, attach, applyEvent and deleteNumber, when set, run
	// instead of the write and return its error.
	createNumber, attach, applyEvent, deleteNumber func() error
}

func (s *faultyStore) ApplyCallEvent(ctx context.Context, e agentline.CallEvent, changed agentline.CallFollowUp) (agentline.Call, error) {
	if s.applyEvent != nil {
		return agentline.Call{}, s.applyEvent()
	}
	return s.Store.ApplyCallEvent(ctx, e, changed)
}

func (s *faultyStore) DeletePhoneNumber(ctx context.Context, projectID, numberID int64) error {
	if s.deleteNumber != nil {
		return s.deleteNumber()
	}
	return s.Store.DeletePhoneNumber(ctx, projectID, numberID)
}

func (s *faultyStore) CreatePhoneNumber(ctx context.Context, n agentline.PhoneNumber) (agentline.PhoneNumber, error) {
	if s.createNumber != nil {
		return agentline.PhoneNumber{}, s.createNumber()
	}
	return s.Store.CreatePhoneNumber(ctx, n)
}

func (s *faultyStore) AttachCallSID(ctx context.Context, projectID, callID int64, callSID, status string) (agentline.Call, error) {
	if s.attach != nil {
		return agentline.Call{}, s.attach()
	}
	return s.Store.AttachCallSID(ctx, projectID, callID, callSID, status)
}

var errStoreDown = errors.New("the database is down")

func storeDown() error { return errStoreDown }

// newOpsEnv builds the environment; change adjusts the Handler's options
// before New.
func newOpsEnv(t *testing.T, change func(*Options)) *opsEnv {
	t.Helper()
	ctx := context.Background()
	e := &opsEnv{db: storetest.Open(t, store.SQLite), fake: twiliofake.New(twiliofake.Options{})}
	t.Cleanup(e.fake.Close)
	e.store = &faultyStore{Store: e.db}
	tw, err := carrier.NewTwilio(carrier.TwilioConfig{AccountSID: e.fake.AccountSID(), AuthToken: e.fake.AuthToken(), BaseURL: e.fake.URL()})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := e.db.CreateUser(ctx, "owner@example.com", "unused-hash")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.db.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.db.CreateProject(ctx, agentline.Project{Name: "other"}, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.project, e.otherProject = p.ID, other.ID
	e.ada = e.agent(t, p.ID, "Ada", "gpt-realtime")
	e.bob = e.agent(t, p.ID, "Bob", "gpt-realtime-mini")
	e.gem = e.agent(t, p.ID, "Gem", "gemini-2.5-flash-native-audio")
	e.eve = e.agent(t, other.ID, "Eve", "gpt-realtime")
	opts := Options{
		Enabled: true, Store: e.store, Carrier: tw, Secret: "s3cret", BotHost: "bot.example.test",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if change != nil {
		change(&opts)
	}
	e.h = New(opts)
	return e
}

// carrierTimeout gives management a carrier client whose requests time out
// after d, for answers the fake holds back.
func (e *opsEnv) carrierTimeout(t *testing.T, d time.Duration) {
	t.Helper()
	tw, err := carrier.NewTwilio(carrier.TwilioConfig{AccountSID: e.fake.AccountSID(), AuthToken: e.fake.AuthToken(), BaseURL: e.fake.URL(), Timeout: d})
	if err != nil {
		t.Fatal(err)
	}
	e.h.carrierAPI = tw
}

func (e *opsEnv) agent(t *testing.T, projectID int64, name, model string) int64 {
	t.Helper()
	a := agentline.Agent{ProjectID: projectID, Name: name, Model: model}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := e.db.CreateAgent(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// number provisions phone for an agent through the operation under test
// elsewhere, as the arrangement of another test.
func (e *opsEnv) number(t *testing.T, phone string, agentID int64) agentline.PhoneNumber {
	t.Helper()
	n, err := e.h.provisionNumber(context.Background(), e.project, phone, agentID)
	if err != nil {
		t.Fatalf("provision %s: %v", phone, err)
	}
	return n
}

// wantCode fails unless err has the code want ("" for no error).
func wantCode(t *testing.T, err error, want string) {
	t.Helper()
	if got := agentline.ErrorCode(err); got != want {
		t.Fatalf("error %v: code %q, want %q", err, got, want)
	}
}
