package widget

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/provider"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// startFixture is a widget Handler on a fresh SQLite database with a fake
// provider, and the data startSession is asked about: a voice channel and
// a live chat form channel of one project (agent Ada), with a pending
// session from a form submission, and another project with its own agent.
type startFixture struct {
	h                 *Handler
	db                *store.DB
	fake              *providerfake.Fake
	agent, other      agentline.Agent
	voice, form       agentline.Channel
	voiceKey, formKey agentline.WidgetKey
	pending           string // a pending session of the form channel
}

func newStartFixture(t *testing.T, providerKeys bool) *startFixture {
	t.Helper()
	ctx := context.Background()
	f := &startFixture{db: storetest.Open(t, store.SQLite), fake: providerfake.New("sk-test", "g-test")}
	srv := httptest.NewServer(f.fake)
	t.Cleanup(srv.Close)
	cfg := provider.Config{OpenAIBaseURL: srv.URL, GeminiBaseURL: srv.URL}
	if providerKeys {
		cfg.OpenAIAPIKey, cfg.GeminiAPIKey = "sk-test", "g-test"
	}
	f.h = New(Options{Store: f.db, Provider: provider.New(cfg, nil)})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	u, err := f.db.CreateUser(ctx, "owner@example.com", "not-a-hash")
	must(err)
	p, err := f.db.CreateProject(ctx, agentline.Project{Name: "Shop"}, u.ID)
	must(err)
	op, err := f.db.CreateProject(ctx, agentline.Project{Name: "Other"}, u.ID)
	must(err)
	newAgent := func(projectID int64, name string) agentline.Agent {
		a := agentline.Agent{ProjectID: projectID, Name: name, Model: "gpt-realtime", Instructions: "Help with orders."}
		must(a.Validate())
		a, err := f.db.CreateAgent(ctx, a)
		must(err)
		return a
	}
	f.agent, f.other = newAgent(p.ID, "Ada"), newAgent(op.ID, "Otto")
	form := agentline.DefaultFormSettings()
	form.Mode = agentline.FormLiveChat
	f.voice, err = f.db.CreateChannel(ctx, agentline.Channel{ProjectID: p.ID, AgentID: &f.agent.ID, Type: agentline.ChannelVoiceWidget, Name: "site"})
	must(err)
	f.form, err = f.db.CreateChannel(ctx, agentline.Channel{ProjectID: p.ID, AgentID: &f.agent.ID, Type: agentline.ChannelForm, Name: "contact",
		Settings: agentline.ChannelSettings{Form: form}})
	must(err)
	f.voiceKey = agentline.WidgetKey{ProjectID: p.ID, ChannelID: f.voice.ID}
	f.formKey = agentline.WidgetKey{ProjectID: p.ID, ChannelID: f.form.ID}
	f.pending, err = agentline.NewSessionID()
	must(err)
	_, err = f.db.CreateLead(ctx, agentline.Lead{ProjectID: p.ID, ChannelID: f.form.ID, Mode: agentline.FormLiveChat,
		Answers: map[string]any{"name": "Grace Hopper", "email": "grace@example.com"}},
		&agentline.WidgetSession{ID: f.pending, ProjectID: p.ID, ChannelID: f.form.ID, AgentID: f.agent.ID})
	must(err)
	return f
}

// sessions returns the sessions stored on a channel.
func (f *startFixture) sessions(t *testing.T, channelID int64) []agentline.WidgetSession {
	t.Helper()
	list, err := f.db.WidgetSessions(context.Background(), f.agent.ProjectID, agentline.SessionFilter{ChannelID: channelID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]agentline.WidgetSession, len(list))
	for i, s := range list {
		out[i] = s.WidgetSession
	}
	return out
}

func TestStartSession(t *testing.T) {
	long := "https://" + strings.Repeat("a", 400) + ".example.com"
	tests := []struct {
		name string
		// noProviderKeys starts the provider client without API keys.
		noProviderKeys bool
		// prepare changes the fixture and returns the key and request.
		prepare  func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest)
		wantCode string
		// check looks at what was stored and answered.
		check func(t *testing.T, f *startFixture, got startedSession)
	}{
		{
			name: "new session on a voice channel",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.voiceKey, sessionRequest{AgentID: f.agent.ID, Origin: long}
			},
			check: func(t *testing.T, f *startFixture, got startedSession) {
				s := got.Session
				if !strings.HasPrefix(s.ID, "ses_") || s.AgentID != f.agent.ID || s.Provider != agentline.ProviderOpenAI || s.Model != "gpt-realtime" {
					t.Errorf("session %+v", s)
				}
				if got.Token.Value == "" || got.Token.URL == "" || got.Token.ExpiresAt.IsZero() {
					t.Errorf("token %+v", got.Token)
				}
				stored := f.sessions(t, f.voice.ID)
				if len(stored) != 1 || stored[0].ID != s.ID || stored[0].Origin != long[:maxStoredOrigin] {
					t.Errorf("stored %+v", stored)
				}
			},
		},
		{
			name: "no agent_id",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.voiceKey, sessionRequest{}
			},
			wantCode: agentline.EInvalid,
		},
		{
			name: "draining instance stores nothing",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				f.h.Drain()
				return f.voiceKey, sessionRequest{AgentID: f.agent.ID}
			},
			wantCode: agentline.EUnavailable,
			check:    noSessionOn(func(f *startFixture) int64 { return f.voice.ID }),
		},
		{
			name: "another project's agent",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.voiceKey, sessionRequest{AgentID: f.other.ID}
			},
			wantCode: agentline.EForbidden,
			check:    noSessionOn(func(f *startFixture) int64 { return f.voice.ID }),
		},
		{
			name: "unknown agent",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.voiceKey, sessionRequest{AgentID: 999999}
			},
			wantCode: agentline.EForbidden,
		},
		{
			name:           "provider not configured stores nothing",
			noProviderKeys: true,
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.voiceKey, sessionRequest{AgentID: f.agent.ID}
			},
			wantCode: agentline.ENotConfigured,
			check:    noSessionOn(func(f *startFixture) int64 { return f.voice.ID }),
		},
		{
			name: "provider error stores nothing",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				f.fake.FailWith(http.StatusInternalServerError)
				return f.voiceKey, sessionRequest{AgentID: f.agent.ID}
			},
			wantCode: agentline.EProvider,
			check:    noSessionOn(func(f *startFixture) int64 { return f.voice.ID }),
		},
		{
			name: "provider error leaves a pending session pending",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				f.fake.FailWith(http.StatusInternalServerError)
				return f.formKey, sessionRequest{AgentID: f.agent.ID, SessionID: f.pending}
			},
			wantCode: agentline.EProvider,
			check: func(t *testing.T, f *startFixture, _ startedSession) {
				stored := f.sessions(t, f.form.ID)
				if len(stored) != 1 || stored[0].ID != f.pending || stored[0].Provider != "" || stored[0].Model != "" {
					t.Errorf("stored %+v, want the pending session untouched", stored)
				}
			},
		},
		{
			name: "a racing start of the same pending session wins: conflict, started once",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				f.h.store = racingStart{Store: f.db, t: t, racer: agentline.WidgetSession{ID: f.pending, ProjectID: f.agent.ProjectID,
					ChannelID: f.form.ID, AgentID: f.agent.ID, Provider: agentline.ProviderOpenAI, Model: "racer", Origin: "https://racer.example"}}
				return f.formKey, sessionRequest{AgentID: f.agent.ID, SessionID: f.pending, Origin: "https://shop.example.com"}
			},
			wantCode: agentline.EConflict,
			check: func(t *testing.T, f *startFixture, _ startedSession) {
				stored := f.sessions(t, f.form.ID)
				if len(stored) != 1 || stored[0].Model != "racer" || stored[0].Origin != "https://racer.example" {
					t.Errorf("stored %+v, want the racer's start alone", stored)
				}
			},
		},
		{
			name: "a store that fails after the token was minted stores nothing",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				f.h.store = failingCreate{f.db}
				return f.voiceKey, sessionRequest{AgentID: f.agent.ID}
			},
			wantCode: agentline.EInternal,
			check: func(t *testing.T, f *startFixture, _ startedSession) {
				noSessionOn(func(f *startFixture) int64 { return f.voice.ID })(t, f, startedSession{})
				if n := len(f.fake.Requests()); n != 1 {
					t.Errorf("provider asked %d times, want once (the token expires unused)", n)
				}
			},
		},
		{
			name: "pending live chat session continues with the lead as context",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.formKey, sessionRequest{AgentID: f.agent.ID, SessionID: f.pending, Origin: "https://shop.example.com"}
			},
			check: func(t *testing.T, f *startFixture, got startedSession) {
				if got.Session.ID != f.pending || got.Session.Provider != agentline.ProviderOpenAI || got.Session.Model != "gpt-realtime" {
					t.Errorf("session %+v", got.Session)
				}
				stored := f.sessions(t, f.form.ID)
				if len(stored) != 1 || stored[0].ID != f.pending || stored[0].Origin != "https://shop.example.com" || stored[0].Provider != agentline.ProviderOpenAI {
					t.Errorf("stored %+v", stored)
				}
				reqs := f.fake.Requests()
				if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "Grace Hopper") || !strings.Contains(string(reqs[0].Body), "Help with orders.") {
					t.Errorf("provider got %d requests; want the instructions with the lead's answers", len(reqs))
				}
			},
		},
		{
			name: "form channel without the form's session",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.formKey, sessionRequest{AgentID: f.agent.ID}
			},
			wantCode: agentline.EInvalid,
			check: func(t *testing.T, f *startFixture, _ startedSession) {
				if stored := f.sessions(t, f.form.ID); len(stored) != 1 || stored[0].ID != f.pending {
					t.Errorf("stored %+v, want only the pending session", stored)
				}
			},
		},
		{
			name: "session of another channel",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.voiceKey, sessionRequest{AgentID: f.agent.ID, SessionID: f.pending}
			},
			wantCode: agentline.ENotFound,
			check:    noSessionOn(func(f *startFixture) int64 { return f.voice.ID }),
		},
		{
			name: "unknown session",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.formKey, sessionRequest{AgentID: f.agent.ID, SessionID: "ses_unknown"}
			},
			wantCode: agentline.ENotFound,
		},
		{
			name: "overlong session id",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				return f.formKey, sessionRequest{AgentID: f.agent.ID, SessionID: strings.Repeat("s", 101)}
			},
			wantCode: agentline.ENotFound,
		},
		{
			name: "pending session with an agent the channel no longer has",
			prepare: func(t *testing.T, f *startFixture) (agentline.WidgetKey, sessionRequest) {
				t.Helper()
				a := agentline.Agent{ProjectID: f.agent.ProjectID, Name: "Bea", Model: "gpt-realtime"}
				if err := a.Validate(); err != nil {
					t.Fatal(err)
				}
				a, err := f.db.CreateAgent(context.Background(), a)
				if err != nil {
					t.Fatal(err)
				}
				f.form.AgentID = &a.ID
				if _, err := f.db.UpdateChannel(context.Background(), f.form); err != nil {
					t.Fatal(err)
				}
				return f.formKey, sessionRequest{AgentID: a.ID, SessionID: f.pending}
			},
			wantCode: agentline.EForbidden,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newStartFixture(t, !tt.noProviderKeys)
			key, in := tt.prepare(t, f)
			got, err := f.h.startSession(context.Background(), channelRef{key: key}, in)
			if code := agentline.ErrorCode(err); code != tt.wantCode {
				t.Fatalf("err = %v (code %q), want code %q", err, code, tt.wantCode)
			}
			if tt.check != nil {
				tt.check(t, f, got)
			}
		})
	}
}

// noSessionOn checks that a refused start stored no session on the
// channel.
func noSessionOn(channel func(*startFixture) int64) func(*testing.T, *startFixture, startedSession) {
	return func(t *testing.T, f *startFixture, _ startedSession) {
		t.Helper()
		if stored := f.sessions(t, channel(f)); len(stored) != 0 {
			t.Errorf("stored %+v after a refusal", stored)
		}
	}
}

// A tool facility that fails fails the start before the provider is asked.
func TestStartSessionToolsError(t *testing.T) {
	f := newStartFixture(t, true)
	boom := errors.New("tool registry down")
	f.h.tools = failingTools{boom}
	_, err := f.h.startSession(context.Background(), channelRef{key: f.voiceKey}, sessionRequest{AgentID: f.agent.ID})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap %v", err, boom)
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("provider asked %d times", n)
	}
	if stored := f.sessions(t, f.voice.ID); len(stored) != 0 {
		t.Errorf("stored %+v", stored)
	}
}

// racingStart is the real store, with another request starting the
// pending session racer describes just after the operation checked that
// it was pending (when it reads the session's lead).
type racingStart struct {
	Store
	t     *testing.T
	racer agentline.WidgetSession
}

func (s racingStart) LeadBySession(ctx context.Context, projectID int64, sessionID string) (agentline.Lead, error) {
	if _, err := s.Store.StartWidgetSession(ctx, s.racer, conversation.Started); err != nil {
		s.t.Errorf("the racing start: %v", err)
	}
	return s.Store.LeadBySession(ctx, projectID, sessionID)
}

// failingCreate is the real store failing to store a new session.
type failingCreate struct{ Store }

func (failingCreate) CreateWidgetSession(context.Context, agentline.WidgetSession, agentline.ConversationFollowUp) (agentline.WidgetSession, error) {
	return agentline.WidgetSession{}, errors.New("the database is down")
}

type failingTools struct{ err error }

func (f failingTools) Definitions(context.Context, agentline.Agent) ([]agentline.ToolDefinition, error) {
	return nil, f.err
}

func (f failingTools) Execute(context.Context, agentline.Agent, agentline.ToolCall) (agentline.ToolResult, error) {
	return agentline.ToolResult{}, f.err
}

// Console tests run on a virtual channel per agent, built per request: a
// test of one agent, then of another project's agent and of a second agent
// of the first project within the config cache's lifetime each start with
// their own agent, and a virtual channel never reaches another project's
// agent.
func TestStartSessionConsoleTests(t *testing.T) {
	f := newStartFixture(t, true)
	ctx := context.Background()
	test := func(projectID, agentID int64) channelRef {
		return channelRef{key: agentline.WidgetKey{ProjectID: projectID, ChannelID: TestChannelID}, testAgent: agentID}
	}
	second := agentline.Agent{ProjectID: f.agent.ProjectID, Name: "Bea", Model: "gpt-realtime"}
	if err := second.Validate(); err != nil {
		t.Fatal(err)
	}
	second, err := f.db.CreateAgent(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []agentline.Agent{f.agent, f.other, second, f.agent} {
		got, err := f.h.startSession(ctx, test(a.ProjectID, a.ID), sessionRequest{AgentID: a.ID, Origin: TestOrigin})
		if err != nil {
			t.Fatalf("test of agent %d: %v", a.ID, err)
		}
		if s := got.Session; s.AgentID != a.ID || s.ProjectID != a.ProjectID || s.ChannelID != TestChannelID {
			t.Fatalf("test of agent %d stored %+v", a.ID, s)
		}
	}
	_, err = f.h.startSession(ctx, test(f.agent.ProjectID, f.other.ID), sessionRequest{AgentID: f.other.ID})
	if code := agentline.ErrorCode(err); code != agentline.ENotFound {
		t.Fatalf("another project's agent on a test channel: %v (code %q), want not_found", err, code)
	}
}
