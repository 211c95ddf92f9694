package app_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// TestShutdownEndsCalls: http.Server.Shutdown does not wait for hijacked
// connections, so Run ends the live calls itself, and their records are
// written before it returns.
func TestShutdownEndsCalls(t *testing.T) {
	t.Parallel()
	model := realtimefake.New("sk-test")
	defer model.Close()
	url := storetest.URL(t, store.SQLite)
	s := apptest.Start(t, apptest.Config(t, url, phoneEnv(model.URL(), nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, c, ss := inboundCall(ctx, t, s, model, agentline.AnalysisSettings{})
	defer c.Close()
	c.SendMedia(ctx, make([]byte, callsim.FrameBytes))
	if _, err := ss.WaitAudio(ctx, 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.Stop(t)
	select {
	case <-c.Done():
	default:
		t.Fatal("the call's stream is still open after Run returned")
	}
	if !ss.WaitDone(time.Second) {
		t.Fatal("the model's socket is still open after shutdown")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	call, err := db.Call(ctx, p.ID, c.CallSID)
	if err != nil || call.EndReason != "shutdown" || call.DurationS == nil || call.Status != agentline.CallCompleted {
		t.Fatalf("record = %+v, %v", call, err)
	}
}

// carrierToken signs the simulated carrier's requests.
const carrierToken = "0123456789abcdef0123456789abcdef"

// A phone call's media stream (a hijacked WebSocket) is not bound by
// AGENTLINE_BODY_READ_TIMEOUT: audio still flows both ways after several
// times that timeout.
func TestCallOutlivesBodyReadTimeout(t *testing.T) {
	t.Parallel()
	model := realtimefake.New("sk-test")
	defer model.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": model.URL(),
		"AGENTLINE_ADMIN_EMAIL": "owner@example.com", "AGENTLINE_ADMIN_PASSWORD": "owner-password",
		"AGENTLINE_BODY_READ_TIMEOUT": "500ms", "TWILIO_AUTH_TOKEN": carrierToken,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, c, ss := inboundCall(ctx, t, s, model, agentline.AnalysisSettings{})
	defer c.Close()
	frame := base64.StdEncoding.EncodeToString(make([]byte, callsim.FrameBytes))
	for round := 1; round <= 2; round++ {
		c.SendMedia(ctx, make([]byte, callsim.FrameBytes))
		if _, err := ss.WaitAudio(ctx, round); err != nil {
			t.Fatalf("round %d, caller to model: %v", round, err)
		}
		ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_1", "delta": frame})
		media := 0 // WaitFor sees each message once, from the first
		if _, err := c.WaitFor(ctx, func(m callsim.Message) bool {
			if m.Event == "media" {
				media++
			}
			return media == round
		}); err != nil {
			t.Fatalf("round %d, model to caller: %v", round, err)
		}
		if round == 1 {
			time.Sleep(1500 * time.Millisecond) // three body read timeouts
		}
	}
}

// inboundCall gives the owner a project whose agent (analysing its
// conversations as analysis says) answers +14155550100, calls it as the
// carrier would, signed, and returns the project, the carrier's side of
// the call and the model's session.
func inboundCall(ctx context.Context, t *testing.T, s *apptest.Server, model *realtimefake.Server, analysis agentline.AnalysisSettings) (agentline.Project, *callsim.Call, *realtimefake.Session) {
	t.Helper()
	owner, _, _ := s.App.Store.UserByEmail(ctx, "owner@example.com")
	p, _ := s.App.Store.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	a, err := s.App.Store.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ada", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI, Language: "en", Analysis: analysis})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.App.Store.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550100", AgentID: &a.ID, Status: agentline.NumberActive, CarrierSID: "PN1"}); err != nil {
		t.Fatal(err)
	}
	c, err := callsim.Inbound(ctx, http.DefaultClient, s.URL, "+14155550199", "+14155550100", callsim.Options{EchoMarks: true, AuthToken: carrierToken, BotHost: "bot.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := model.Next(ctx)
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	return p, c, ss
}
