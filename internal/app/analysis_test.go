package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/analysisfake"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// A phone call through the relay: the caller speaks (the realtime model's
// transcription events), hangs up, and the call's conversation is analysed
// through the Responses API fake from the transcript the relay recorded.
// One OPENAI_BASE_URL serves both: the realtime WebSocket (proxied to the
// realtime fake) and /v1/responses.
func TestPhoneCallIsAnalysed(t *testing.T) {
	t.Parallel()
	model := realtimefake.New("sk-test")
	defer model.Close()
	text := analysisfake.New("sk-test", "")
	target, err := url.Parse(model.URL())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/responses", text)
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	providers := httptest.NewServer(mux)
	defer providers.Close()
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": providers.URL,
		"TWILIO_AUTH_TOKEN": carrierToken, "AGENTLINE_ADMIN_EMAIL": "owner@example.com", "AGENTLINE_ADMIN_PASSWORD": "owner-password",
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := s.App.Store
	owner, _, _ := db.UserByEmail(ctx, "owner@example.com")
	p, _ := db.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	a, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ada", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI, Language: "en",
		Analysis: agentline.AnalysisSettings{Summary: true, SuccessCriteria: "The caller learns when the order ships."}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550100", AgentID: &a.ID,
		Status: agentline.NumberActive, CarrierSID: "PN1"}); err != nil {
		t.Fatal(err)
	}
	c, err := callsim.Inbound(ctx, http.DefaultClient, s.URL, "+14155550199", "+14155550100",
		callsim.Options{EchoMarks: true, AuthToken: carrierToken, BotHost: "bot.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ss, err := model.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitType(ctx, "session.update"); err != nil {
		t.Fatal(err)
	}
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_1", "transcript": "Hello, this is Ada."})
	ss.Send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_2", "transcript": "When does my order ship?"})
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_3", "transcript": "Tomorrow."})
	// The relay hands the lines to the call log writer, which stores them
	// during the call: wait until they are there, then the caller hangs up.
	call, err := db.Call(ctx, p.ID, c.CallSID)
	if err != nil {
		t.Fatal(err)
	}
	id := agentline.CallConversationID(call.ID)
	var conv agentline.Conversation
	for i := 0; i < 1000 && len(conv.Transcript) < 3; i++ {
		time.Sleep(10 * time.Millisecond)
		conv, _ = db.Conversation(ctx, p.ID, id)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3000 { // the analysis waits 3 s after the end, then asks
		if conv, err = db.Conversation(ctx, p.ID, id); err == nil && conv.Analysis != nil && conv.Analysis.Status != agentline.AnalysisPending {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	an := conv.Analysis
	if an == nil || an.Status != agentline.AnalysisDone || an.Summary != "The user asked: When does my order ship?" ||
		an.Success == nil || !*an.Success || an.Model != "gpt-4.1-mini" {
		t.Fatalf("analysis of the call: %+v (conversation %+v, err %v)", an, conv, err)
	}
	reqs := text.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "Agent: Hello, this is Ada.") ||
		!strings.Contains(string(reqs[0].Body), "User: When does my order ship?") || !strings.Contains(string(reqs[0].Body), "phone call") {
		t.Fatalf("provider requests: %+v", reqs)
	}
}
