package app_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider"
	"github.com/agentline/agentline/internal/provider/geminilivefake"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// The Gemini Live messages of a phone call, both ways, checked against
// @google/genai's own types by tsc: a test call of a Gemini-kind agent
// (greeting, webhook tool) through the stream handler and relay, while the
// fake sends every kind of server message the relay reads (audio,
// transcriptions, interrupted, turnComplete, toolCall,
// toolCallCancellation, sessionResumptionUpdate, goAway) and the call
// resumes on a second connection. Every message each side sent is then
// written into a TypeScript file as a LiveServerMessage or
// LiveClientMessage literal: a misspelt field is an excess property, a
// wrong shape a type error. Enums are compared as strings (the wire
// carries their names; the SDK's string enums would refuse a literal).
func TestGenAITypesOfTheGeminiPhoneMessages(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "@google/genai")
	nodeModules(t, "typescript")
	live := geminilivefake.New("g-test")
	defer live.Close()
	hookURL, _ := webhookTool(t, `{"status":"shipped on March 3"}`, 2)
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "GEMINI_API_KEY": "g-test", "GEMINI_BASE_URL": live.URL(),
		"TWILIO_AUTH_TOKEN": carrierToken, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var gem agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Acme"}, &p)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Gem", "model": "gemini-2.5-flash-native-audio-preview-09-2025", "greeting": "Hello from the shop."}, &gem)
	s.Must(t, 201, "POST", "/api/agents/"+itoa(gem.ID)+"/tools", tok, map[string]any{"name": "lookup_order", "description": "Find an order",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}, "url": hookURL}, nil)
	var tc testCallStarted
	s.Must(t, 201, "POST", "/api/agents/"+itoa(gem.ID)+"/test-calls", tok, nil, &tc)
	call, err := openTestCall(ctx, s, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer call.Close()
	ss, err := live.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = ss.WaitFor(ctx, func(m geminilivefake.Message) bool { return strings.Contains(string(m.Raw), `"text"`) })
	must(err)
	for range 5 {
		must(call.SendMedia(ctx, callsim.Voice(20 * time.Millisecond)[:160]))
	}
	must(ss.WaitAudioBytes(ctx, 5*320))
	must(call.SendDTMF(ctx, "5"))
	must(ss.SendInputTranscription(ctx, "Where is my order?"))
	must(ss.SendAudio(ctx, geminilivefake.Tone(100*time.Millisecond)))
	must(ss.SendOutputTranscription(ctx, "Let me look."))
	must(ss.SendInterrupted(ctx))
	must(ss.SendTurnComplete(ctx))
	must(ss.SendToolCall(ctx, geminilivefake.FunctionCall{ID: "fc_1", Name: "lookup_order", Args: map[string]any{"id": "42"}}))
	_, err = ss.WaitKind(ctx, "toolResponse")
	must(err)
	must(ss.SendToolCallCancellation(ctx, "fc_0"))
	_, err = ss.IssueHandle(ctx)
	must(err)
	must(ss.SendGoAway(ctx, 30*time.Second))
	next, err := live.Next(ctx)
	must(err)
	_, err = next.WaitKind(ctx, "setup")
	must(err)
	must(call.Stop(ctx))
	if !next.WaitDone(5 * time.Second) {
		t.Fatal("the resumed connection stayed open after the call")
	}

	var server, client []string
	for _, sess := range []*geminilivefake.Session{ss, next} {
		for _, m := range sess.Sent() {
			server = append(server, string(m))
		}
		for _, m := range sess.Messages() {
			client = append(client, string(m.Raw))
		}
	}
	src, dir := checkGenAITypes(t, nm, server, client, nil)
	if len(server) < 10 || len(client) < 8 {
		t.Fatalf("checked %d server and %d client messages", len(server), len(client))
	}
	t.Logf("tsc took %d server and %d client messages as @google/genai types", len(server), len(client))
	// And a misspelt field fails, so the check above means something.
	bad := strings.Replace(src, `"toolResponse"`, `"toolResponses"`, 1)
	must(os.WriteFile(filepath.Join(dir, "check.ts"), []byte(bad), 0o644))
	if out, err := exec.Command(filepath.Join(nm, ".bin", "tsc"), "-p", dir).CombinedOutput(); err == nil || !strings.Contains(string(out), "toolResponses") {
		t.Fatalf("tsc accepted a toolResponses field: %v\n%s", err, out)
	}
}

// The setups the widget's auth tokens are locked to, checked against
// @google/genai's LiveClientSetup by tsc: spoken and text sessions of a
// native-audio agent (text: AUDIO with outputAudioTranscription) and of a
// half-cascade one (text: TEXT), with the agent's tools.
func TestGenAITypesOfTheWidgetGeminiSetups(t *testing.T) {
	t.Parallel()
	nm := nodeModules(t, "@google/genai")
	nodeModules(t, "typescript")
	fake := providerfake.New("", "g-test")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := provider.New(provider.Config{GeminiBaseURL: srv.URL, GeminiAPIKey: "g-test"}, nil)
	tools := []agentline.ToolDefinition{{Name: "lookup_order", Description: "Find an order",
		Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)}}
	for _, model := range []string{"gemini-2.5-flash-native-audio-preview-12-2025", "gemini-live-2.5-flash-preview"} {
		a := agentline.Agent{Provider: agentline.ProviderGemini, Model: model, Voice: "Puck", Language: "en-US", Instructions: "Be brief."}
		for _, m := range []provider.Modality{provider.Audio, provider.Text} {
			if _, err := c.SessionToken(context.Background(), a, tools, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	var setups []string
	for _, r := range fake.Requests() {
		var body struct{ BidiGenerateContentSetup json.RawMessage }
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		setups = append(setups, string(body.BidiGenerateContentSetup))
	}
	if len(setups) != 4 || !strings.Contains(setups[1], `"responseModalities":["AUDIO"]`) || !strings.Contains(setups[1], `"outputAudioTranscription":{}`) ||
		!strings.Contains(setups[3], `"responseModalities":["TEXT"]`) {
		t.Fatalf("setups:\n%s", strings.Join(setups, "\n"))
	}
	src, dir := checkGenAITypes(t, nm, nil, nil, setups)
	t.Logf("tsc took %d token setups as LiveClientSetup", len(setups))
	bad := strings.Replace(src, `"outputAudioTranscription"`, `"outputTranscription"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "check.ts"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(filepath.Join(nm, ".bin", "tsc"), "-p", dir).CombinedOutput(); err == nil || !strings.Contains(string(out), "outputTranscription") {
		t.Fatalf("tsc accepted an outputTranscription setup field: %v\n%s", err, out)
	}
}

// genaiModules is the node_modules with @google/genai and typescript, or
// "" when they are missing (a check that is left out, unless
// AGENTLINE_REQUIRE_NODE=1 makes that a failure): for tests whose other
// assertions stand without it.
func genaiModules(t *testing.T) string {
	t.Helper()
	var nm string
	t.Run("genai", func(t *testing.T) { nm = nodeModules(t, "@google/genai"); nodeModules(t, "typescript") })
	return nm
}

// checkGenAITypes has tsc check Live API JSON against @google/genai's
// types: server messages as LiveServerMessage, client messages as
// LiveClientMessage, setups (an auth token's bidiGenerateContentSetup) as
// LiveClientSetup. A misspelt field is an excess property, a wrong shape
// a type error. Enums are compared as strings (the wire carries their
// names; the SDK's string enums would refuse a literal). It returns the
// TypeScript source and the directory it was checked in.
func checkGenAITypes(t *testing.T, nm string, server, client, setups []string) (src, dir string) {
	t.Helper()
	src = `import type { LiveServerMessage, LiveClientMessage, LiveClientSetup } from "@google/genai";
type Wire<T> = T extends string ? string : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]?: Wire<T[K]> } : T;
type Server = Wire<Omit<LiveServerMessage, "text" | "data">>;
type Client = Wire<LiveClientMessage>;
type Setup = Wire<LiveClientSetup>;
export const server: Server[] = [
` + strings.Join(server, ",\n") + `];
export const client: Client[] = [
` + strings.Join(client, ",\n") + `];
export const setups: Setup[] = [
` + strings.Join(setups, ",\n") + `];
`
	dir = t.TempDir()
	config := `{"compilerOptions": {"strict": true, "noEmit": true, "skipLibCheck": true, "module": "esnext", "moduleResolution": "bundler",
  "types": [], "paths": {"@google/genai": [` + quoteJSON(filepath.Join(nm, "@google", "genai", "dist", "genai.d.ts")) + `]}}, "files": ["check.ts"]}`
	for name, body := range map[string]string{"check.ts": src, "tsconfig.json": config} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(filepath.Join(nm, ".bin", "tsc"), "-p", dir).CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s\n%s", err, out, src)
	}
	return src, dir
}

func quoteJSON(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
