package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/otlptest"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/relay"
)

// With OTEL_EXPORTER_OTLP_ENDPOINT set, the spans of an HTTP request, a
// phone call (its turn, the turn's tool call) and the call's analysis job
// (with its provider request) reach an OTLP/HTTP receiver, decoded from
// the real protobuf, parented as they happened and linked by the
// conversation id. The exporter reads the standard variables from the
// process's environment, hence Setenv (and no t.Parallel).
func TestTracesReachOTLPReceiver(t *testing.T) {
	recv := otlptest.New()
	t.Cleanup(recv.Close) // after the server's own cleanup, which flushes
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "agentline-test")
	model, _, providers := openAIFakes(t)
	s := apptest.StartFresh(t, store.SQLite, phoneEnv(providers, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}))
	if !s.App.Config.Tracing {
		t.Fatal("tracing is off with OTEL_EXPORTER_OTLP_ENDPOINT set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	convID := tracedCall(ctx, t, s, model)
	if res := s.Do(t, "GET", "/api/projects", s.Login(t, "owner@example.com", "owner-password"), nil); res.Status != 200 {
		t.Fatalf("GET /api/projects: %d", res.Status)
	}
	s.Stop(t) // flushes the exporter
	spans := recv.Spans()
	if n, errs := recv.Requests(); n == 0 || len(errs) > 0 {
		t.Fatalf("export requests: %d, errors %v", n, errs)
	}
	t.Logf("%d spans: %v", len(spans), names(spans))
	byID := map[string]otlptest.Span{}
	for _, sp := range spans {
		byID[sp.ID] = sp
		if sp.Service != "agentline-test" {
			t.Errorf("span %q of service %q, want OTEL_SERVICE_NAME's", sp.Name, sp.Service)
		}
	}
	one := func(name string, ok func(otlptest.Span) bool) otlptest.Span {
		t.Helper()
		for _, sp := range spans {
			if sp.Name == name && (ok == nil || ok(sp)) {
				return sp
			}
		}
		t.Fatalf("no span %q among %d: %v", name, len(spans), names(spans))
		return otlptest.Span{}
	}
	parentOf := func(sp otlptest.Span) string { return byID[sp.ParentID].Name }
	one("GET /api/projects", func(sp otlptest.Span) bool {
		return sp.ParentID == "" && sp.Attrs["http.response.status_code"] == "200"
	})
	call := one("phone_call", nil)
	if call.Attrs[agentline.ConversationIDAttribute] != convID {
		t.Errorf("call span's conversation id = %q, want %q", call.Attrs[agentline.ConversationIDAttribute], convID)
	}
	if p := parentOf(call); p != "GET /api/telephony/stream/{agent_id}" {
		t.Errorf("call span's parent = %q, want the stream's request", p)
	}
	turn := one(relay.TurnSpan, func(sp otlptest.Span) bool { return sp.ParentID == call.ID })
	tool := one(relay.ToolSpan, nil)
	if tool.ParentID != turn.ID || tool.Attrs["agentline.tool.name"] != "lookup_order" {
		t.Errorf("tool span %+v, want a child of turn %s", tool, turn.ID)
	}
	job := one("analyze_conversation", nil)
	if job.Attrs[agentline.ConversationIDAttribute] != convID {
		t.Errorf("job span's conversation id = %q, want %q", job.Attrs[agentline.ConversationIDAttribute], convID)
	}
	post := one("HTTP POST", func(sp otlptest.Span) bool { return sp.ParentID == job.ID })
	if !strings.HasSuffix(post.Attrs["url.full"], "/v1/responses") {
		t.Errorf("provider request span %+v", post)
	}
}

func names(spans []otlptest.Span) []string {
	var out []string
	for _, sp := range spans {
		out = append(out, sp.Name)
	}
	return out
}

// tracedCall runs one inbound call with a turn that asks for a tool, and
// waits for the call's analysis; it returns the call's conversation id.
func tracedCall(ctx context.Context, t *testing.T, s *apptest.Server, model *realtimefake.Server) string {
	t.Helper()
	p, c, ss := inboundCall(ctx, t, s, model, agentline.AnalysisSettings{Summary: true})
	defer c.Close()
	if _, err := ss.WaitType(ctx, "session.update"); err != nil {
		t.Fatal(err)
	}
	ss.Send(ctx, map[string]any{"type": "response.created"})
	ss.Send(ctx, map[string]any{"type": "response.function_call_arguments.done", "call_id": "call_1", "name": "lookup_order", "arguments": `{}`})
	ss.Send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_1", "transcript": "Let me look."})
	ss.Send(ctx, map[string]any{"type": "response.done"})
	ss.Send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_2", "transcript": "Where is my order?"})
	if _, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool {
		return ev.Type == "conversation.item.create" && strings.Contains(string(ev.Raw), "function_call_output")
	}); err != nil {
		t.Fatal(err)
	}
	conv := hangUpForAnalysis(ctx, t, s, p, c, 2)
	if conv.Analysis == nil || conv.Analysis.Status != agentline.AnalysisDone {
		t.Fatalf("analysis of the call: %+v", conv.Analysis)
	}
	return conv.ID
}

// With no OTLP endpoint set, no tracer provider (nor exporter) is built,
// and requests reach the handlers with no span in their context: the edge
// is not wrapped.
func TestTracingOffByDefault(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	s := apptest.StartFresh(t, store.SQLite, nil)
	if s.App.Config.Tracing || s.App.TracingOn() {
		t.Fatal("tracing is on with no OTLP endpoint set")
	}
}
