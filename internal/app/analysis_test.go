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
	model, text, providers := openAIFakes(t)
	s := apptest.StartFresh(t, store.SQLite, phoneEnv(providers, nil))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, c, ss := inboundCall(ctx, t, s, model, agentline.AnalysisSettings{Summary: true, SuccessCriteria: "The caller learns when the order ships."})
	defer c.Close()
	if _, err := ss.WaitType(ctx, "session.update"); err != nil {
		t.Fatal(err)
	}
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_1", "transcript": "Hello, this is Ada."})
	ss.Send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_2", "transcript": "When does my order ship?"})
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_3", "transcript": "Tomorrow."})
	conv := hangUpForAnalysis(ctx, t, s, p, c, 3)
	an := conv.Analysis
	if an == nil || an.Status != agentline.AnalysisDone || an.Summary != "The user asked: When does my order ship?" ||
		an.Success == nil || !*an.Success || an.Model != "gpt-4.1-mini" {
		t.Fatalf("analysis of the call: %+v (conversation %+v)", an, conv)
	}
	reqs := text.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "Agent: Hello, this is Ada.") ||
		!strings.Contains(string(reqs[0].Body), "User: When does my order ship?") || !strings.Contains(string(reqs[0].Body), "phone call") {
		t.Fatalf("provider requests: %+v", reqs)
	}
}

// openAIFakes serves the realtime fake and the text APIs' fake (the
// Responses API of analysis, test runs' person and judge) under one base
// URL, as one OPENAI_BASE_URL names both: /v1/responses goes to the text
// fake, the rest (the realtime WebSocket) to the realtime one.
func openAIFakes(t *testing.T) (model *realtimefake.Server, text *analysisfake.Fake, baseURL string) {
	t.Helper()
	model = realtimefake.New("sk-test")
	t.Cleanup(model.Close)
	text = analysisfake.New("sk-test", "")
	target, err := url.Parse(model.URL())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/responses", text)
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	providers := httptest.NewServer(mux)
	t.Cleanup(providers.Close)
	return model, text, providers.URL
}

// hangUpForAnalysis waits until the call's conversation holds lines
// transcript lines (the relay hands them to the call log writer, which
// stores them during the call), hangs up as the caller, and waits for the
// conversation's analysis to be over; it returns the conversation.
func hangUpForAnalysis(ctx context.Context, t *testing.T, s *apptest.Server, p agentline.Project, c *callsim.Call, lines int) agentline.Conversation {
	t.Helper()
	db := s.App.Store
	call, err := db.Call(ctx, p.ID, c.CallSID)
	if err != nil {
		t.Fatal(err)
	}
	id := agentline.CallConversationID(call.ID)
	var conv agentline.Conversation
	for i := 0; i < 1000 && len(conv.Transcript) < lines; i++ {
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
	return conv
}
