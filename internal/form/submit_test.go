package form

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// submitFixture is a form Handler on a fresh SQLite database whose
// notifier delivers to a receiver on loopback, with three forms of one
// project: lead capture (notifying), live chat with the agent, and live
// chat whose agent is missing.
type submitFixture struct {
	h                             *Handler
	db                            *store.DB
	agent                         agentline.Agent
	leadForm, chatForm, agentless agentline.Channel
	mu                            sync.Mutex
	notified                      []Payload
}

func newSubmitFixture(t *testing.T) *submitFixture {
	t.Helper()
	ctx := context.Background()
	f := &submitFixture{db: storetest.Open(t, store.SQLite)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p Payload
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &p)
		f.mu.Lock()
		f.notified = append(f.notified, p)
		f.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	startNotifier(t, f.db, NewNotifier(NotifierOptions{Client: srv.Client(), Backoff: []time.Duration{}}))
	f.h = New(Options{Store: f.db})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	u, err := f.db.CreateUser(ctx, "owner@example.com", "not-a-hash")
	must(err)
	p, err := f.db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
	must(err)
	a := agentline.Agent{ProjectID: p.ID, Name: "Ada", Model: "gpt-realtime"}
	must(a.Validate())
	f.agent, err = f.db.CreateAgent(ctx, a)
	must(err)
	newForm := func(mode agentline.FormMode, agentID *int64, notifyURL string) agentline.Channel {
		form := &agentline.FormSettings{Mode: mode, NotifyURL: notifyURL, Fields: []agentline.FormField{
			{Name: "name", Label: "Name", Type: agentline.FieldText, Required: true},
			{Name: "email", Label: "Email", Type: agentline.FieldEmail, Required: true},
			{Name: "topic", Label: "Topic", Type: agentline.FieldSelect, Options: []string{"Sales", "Support"}},
			{Name: "consent", Label: "I agree", Type: agentline.FieldCheckbox, Required: true},
		}}
		must(form.Validate())
		ch, err := f.db.CreateChannel(ctx, agentline.Channel{ProjectID: p.ID, AgentID: agentID, Type: agentline.ChannelForm,
			Name: "Contact", Settings: agentline.ChannelSettings{Form: form}})
		must(err)
		return ch
	}
	f.leadForm = newForm(agentline.FormLeadCapture, nil, srv.URL)
	f.chatForm = newForm(agentline.FormLiveChat, &f.agent.ID, "")
	f.agentless = newForm(agentline.FormLiveChat, nil, "")
	return f
}

// stored returns the leads and sessions stored in the project.
func (f *submitFixture) stored(t *testing.T) ([]agentline.Lead, []agentline.SessionWithEvents) {
	t.Helper()
	ctx := context.Background()
	leads, err := f.db.Leads(ctx, f.agent.ProjectID, agentline.SessionFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := f.db.WidgetSessions(ctx, f.agent.ProjectID, agentline.SessionFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return leads, sessions
}

// sent is a submission of the given text answers with consent checked.
func sent(text map[string]string) submission {
	return submission{text: text, checked: map[string]bool{"consent": true}}
}

var goodAnswers = map[string]string{"name": "  Ada Lovelace ", "email": "ada@example.com", "topic": "Sales"}

func TestSubmitForm(t *testing.T) {
	long := "https://" + strings.Repeat("a", 400) + ".example.com"
	tests := []struct {
		name   string
		form   func(f *submitFixture) agentline.Channel
		sub    submission
		origin string
		// arrange changes the fixture before the submission.
		arrange func(f *submitFixture)
		// wantCode is the error's code; wantFields its per-field problems;
		// wantErr the error itself, when it is not an *agentline.Error.
		wantCode   string
		wantFields map[string]string
		wantErr    error
		check      func(t *testing.T, f *submitFixture, lead agentline.Lead)
	}{
		{
			name: "lead capture stores the trimmed answers and notifies",
			form: func(f *submitFixture) agentline.Channel { return f.leadForm },
			sub:  sent(goodAnswers),
			check: func(t *testing.T, f *submitFixture, lead agentline.Lead) {
				want := map[string]any{"name": "Ada Lovelace", "email": "ada@example.com", "topic": "Sales", "consent": true}
				if lead.ID == 0 || lead.Mode != agentline.FormLeadCapture || lead.SessionID != nil || lead.AgentID != nil || !sameAnswers(lead.Answers, want) {
					t.Errorf("lead %+v", lead)
				}
				leads, sessions := f.stored(t)
				if len(leads) != 1 || leads[0].ID != lead.ID || !sameAnswers(leads[0].Answers, want) || len(sessions) != 0 {
					t.Errorf("stored %+v and %d sessions", leads, len(sessions))
				}
				for i := 0; i < 1000 && f.notifiedCount() == 0; i++ {
					time.Sleep(10 * time.Millisecond)
				}
				f.mu.Lock()
				defer f.mu.Unlock()
				if len(f.notified) != 1 || f.notified[0].Event != "lead.created" || f.notified[0].Lead.ID != lead.ID {
					t.Errorf("notified %+v", f.notified)
				}
			},
		},
		{
			name:   "live chat stores the lead with a pending session for the agent",
			form:   func(f *submitFixture) agentline.Channel { return f.chatForm },
			sub:    sent(goodAnswers),
			origin: long,
			check: func(t *testing.T, f *submitFixture, lead agentline.Lead) {
				if lead.Mode != agentline.FormLiveChat || lead.SessionID == nil || !strings.HasPrefix(*lead.SessionID, "ses_") ||
					lead.AgentID == nil || *lead.AgentID != f.agent.ID {
					t.Fatalf("lead %+v", lead)
				}
				leads, sessions := f.stored(t)
				if len(leads) != 1 || len(sessions) != 1 {
					t.Fatalf("stored %d leads, %d sessions", len(leads), len(sessions))
				}
				s := sessions[0]
				if s.ID != *lead.SessionID || s.ChannelID != f.chatForm.ID || s.AgentID != f.agent.ID || s.Origin != long[:maxStoredOrigin] || s.Provider != "" {
					t.Errorf("session %+v", s.WidgetSession)
				}
			},
		},
		{
			name:     "live chat without an agent stores nothing",
			form:     func(f *submitFixture) agentline.Channel { return f.agentless },
			sub:      sent(goodAnswers),
			wantCode: agentline.ENotConfigured,
			check:    nothingStored,
		},
		{
			name: "honeypot filled in stores nothing",
			form: func(f *submitFixture) agentline.Channel { return f.leadForm },
			sub: func() submission {
				s := sent(goodAnswers)
				s.honeypot = "https://spam.example"
				return s
			}(),
			wantCode: agentline.EInvalid,
			check:    nothingStored,
		},
		{
			name: "invalid answers name each field",
			form: func(f *submitFixture) agentline.Channel { return f.chatForm },
			sub: submission{text: map[string]string{"name": " ", "email": "ada@", "topic": "Gossip"}, checked: map[string]bool{},
				problems: fieldErrors{"colour": "this form has no such field"}},
			wantCode: agentline.EInvalid,
			wantFields: map[string]string{
				"name":    "is required",
				"email":   "must be an email address, such as name@example.com",
				"topic":   "must be one of the choices",
				"consent": "must be checked",
				"colour":  "this form has no such field",
			},
			check: nothingStored,
		},
		{
			name:       "a problem found while reading stands alone",
			form:       func(f *submitFixture) agentline.Channel { return f.leadForm },
			sub:        submission{text: goodAnswers, checked: map[string]bool{"consent": true}, problems: fieldErrors{"email": "must be text"}},
			wantCode:   agentline.EInvalid,
			wantFields: map[string]string{"email": "must be text"},
			check:      nothingStored,
		},
		{
			name:     "live chat: a write that fails after the lead, its session and its event stores none of them",
			form:     func(f *submitFixture) agentline.Channel { return f.chatForm },
			sub:      sent(goodAnswers),
			arrange:  func(f *submitFixture) { f.h.store = failAfterThen{f.db} },
			wantCode: agentline.EInternal,
			wantErr:  errStoreDown,
			check:    nothingStored,
		},
		{
			name:     "lead capture: a write that fails after the notify job was queued leaves no job",
			form:     func(f *submitFixture) agentline.Channel { return f.leadForm },
			sub:      sent(goodAnswers),
			arrange:  func(f *submitFixture) { f.h.store = failAfterThen{f.db} },
			wantCode: agentline.EInternal,
			wantErr:  errStoreDown,
			check: func(t *testing.T, f *submitFixture, lead agentline.Lead) {
				nothingStored(t, f, lead)
				var jobs int
				if err := f.db.JobPool().QueryRow("SELECT count(*) FROM river_job").Scan(&jobs); err != nil || jobs != 0 {
					t.Errorf("%d jobs queued (%v), want none", jobs, err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSubmitFixture(t)
			if tt.arrange != nil {
				tt.arrange(f)
			}
			lead, err := f.h.submitForm(context.Background(), tt.form(f), tt.sub, tt.origin)
			if code := agentline.ErrorCode(err); code != tt.wantCode {
				t.Fatalf("err = %v (code %q), want code %q", err, code, tt.wantCode)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantFields != nil {
				var e *agentline.Error
				if !errors.As(err, &e) || len(e.Fields) != len(tt.wantFields) {
					t.Fatalf("err = %#v, want fields %v", err, tt.wantFields)
				}
				for name, msg := range tt.wantFields {
					if e.Fields[name] != msg {
						t.Errorf("field %s: %q, want %q", name, e.Fields[name], msg)
					}
				}
			}
			if tt.check != nil {
				tt.check(t, f, lead)
			}
		})
	}
}

// failAfterThen is the real store whose CreateLeadThen runs the
// operation's own callback (the lead and its session written, its event
// emitted and its notify job queued, all in the write's transaction) and
// then fails, as a write that cannot commit does.
type failAfterThen struct{ Store }

var errStoreDown = errors.New("the database is down")

func (s failAfterThen) CreateLeadThen(ctx context.Context, l agentline.Lead, session *agentline.WidgetSession,
	then func(ctx context.Context, l agentline.Lead, out agentline.Outbox) error) (agentline.Lead, error) {
	return s.Store.CreateLeadThen(ctx, l, session, func(ctx context.Context, l agentline.Lead, out agentline.Outbox) error {
		if err := then(ctx, l, out); err != nil {
			return err
		}
		return errStoreDown
	})
}

// nothingStored checks that a refused submission left no lead, no session
// and no notification behind.
func nothingStored(t *testing.T, f *submitFixture, _ agentline.Lead) {
	t.Helper()
	if leads, sessions := f.stored(t); len(leads) != 0 || len(sessions) != 0 {
		t.Errorf("stored %d leads, %d sessions after a refusal", len(leads), len(sessions))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.notified) != 0 {
		t.Errorf("notified %+v after a refusal", f.notified)
	}
}

func sameAnswers(got, want map[string]any) bool {
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}

func (f *submitFixture) notifiedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.notified)
}

// startNotifier runs a job queue on db with n as its only worker until the
// test ends.
func startNotifier(t *testing.T, db *store.DB, n *Notifier) {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, string(db.Dialect()), db.JobPool(), db.MigrationLock); err != nil {
		t.Fatal(err)
	}
	r := jobs.NewRegistry()
	jobs.Add(r, n, n.MaxAttempts())
	q, err := jobs.New(jobs.Options{Pool: db.JobPool(), Dialect: string(db.Dialect()), PollInterval: 50 * time.Millisecond}, r)
	if err != nil {
		t.Fatal(err)
	}
	db.SetOutbox(store.OutboxOptions{Enqueue: q.EnqueueTx})
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Stop(ctx) })
}
