package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/provider/analysisfake"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// fakeProvider is one OpenAI-compatible provider on loopback, under one
// base URL: the model list and client secrets (providerfake), the realtime
// socket (realtimefake) and the Responses API (analysisfake), all taking
// one key.
type fakeProvider struct {
	url      string
	tokens   *providerfake.Fake
	realtime *realtimefake.Server
	text     *analysisfake.Fake
}

func newFakeProvider(t *testing.T, key string) *fakeProvider {
	t.Helper()
	f := &fakeProvider{tokens: providerfake.New(key, key), realtime: realtimefake.New(key), text: analysisfake.New(key, "")}
	mux := http.NewServeMux()
	mux.Handle("/v1/responses", f.text)
	mux.Handle("/v1/realtime", f.realtime.Handler())
	mux.Handle("/", f.tokens)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); f.realtime.Close() })
	f.url = srv.URL
	return f
}

// Secret keys of the test: none may show anywhere but at their provider.
const (
	keyA      = "sk-project-a-0123456789-AAAA"
	keyB      = "sk-project-b-9876543210-BBBB"
	keyDeploy = "sk-deployment-key-DDDD"
)

// Two projects with accounts at two providers each reach their own for a
// widget session, a phone call and the call's analysis; a third without an
// account uses the deployment's. A refused key is a 400 naming the
// provider's answer but never the key; the keys are in no API answer, log
// line or CSV, and the SQLite file holds them only sealed.
func TestProjectsReachTheirOwnProviders(t *testing.T) {
	t.Parallel()
	a, b, d := newFakeProvider(t, keyA), newFakeProvider(t, keyB), newFakeProvider(t, keyDeploy)
	var logs apptest.Buffer
	dbURL := storetest.URL(t, store.SQLite)
	s := apptest.StartLogged(t, apptest.Config(t, dbURL, map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "TWILIO_AUTH_TOKEN": carrierToken,
		"OPENAI_API_KEY": keyDeploy, "OPENAI_BASE_URL": d.url, "AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
		"AGENTLINE_ENCRYPTION_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)),
	}), &logs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	_, tok := s.NewUser(t, "owner@example.com")
	var answers bytes.Buffer // every API answer of the test
	must := func(want int, method, path string, body, out any) {
		t.Helper()
		r := s.Must(t, want, method, path, tok, body, out)
		answers.Write(r.Body)
	}

	type project struct {
		p     agentline.Project
		agent agentline.Agent
		key   string
		via   *fakeProvider
		phone string
	}
	projects := []*project{{via: a, phone: "+14155550101"}, {via: b, phone: "+14155550102"}, {via: d, phone: "+14155550103"}}
	for i, pr := range projects {
		must(201, "POST", "/api/projects", map[string]string{"name": "P" + itoa(int64(i))}, &pr.p)
		must(201, "POST", "/api/projects/"+itoa(pr.p.ID)+"/agents", map[string]any{"name": "Ada", "language": "en",
			"analysis": map[string]any{"summary": true}}, &pr.agent)
		var c agentline.Channel
		var key struct{ Key string }
		must(201, "POST", "/api/projects/"+itoa(pr.p.ID)+"/channels", map[string]any{"type": "voice_widget", "name": "site", "agent_id": pr.agent.ID}, &c)
		must(201, "POST", "/api/channels/"+itoa(c.ID)+"/key", map[string]any{"allowed_origins": []string{"https://shop.example.com"}}, &key)
		pr.key = key.Key
		if _, err := s.App.Store.CreatePhoneNumber(context.Background(), agentline.PhoneNumber{ProjectID: pr.p.ID, PhoneNumber: pr.phone,
			AgentID: &pr.agent.ID, Status: agentline.NumberActive, CarrierSID: "PN" + itoa(int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	pA, pB := projects[0], projects[1]

	// A refused key: 400 with the provider's status and message, not the key.
	wrong := "sk-wrong-key-for-a-provider-WXYZ"
	r := s.Do(t, "PUT", "/api/projects/"+itoa(pA.p.ID)+"/providers/openai", tok, map[string]string{"api_key": wrong, "base_url": a.url})
	answers.Write(r.Body)
	if r.Status != 400 || !strings.Contains(string(r.Body), "status 401") || !strings.Contains(string(r.Body), "Incorrect API key provided") ||
		strings.Contains(string(r.Body), "sk-wrong-key") {
		t.Fatalf("wrong key: %s", r)
	}
	// An unreachable provider: 502.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if r := s.Do(t, "PUT", "/api/projects/"+itoa(pA.p.ID)+"/providers/openai", tok, map[string]string{"api_key": keyA, "base_url": gone.URL}); r.Status != 502 ||
		!strings.Contains(string(r.Body), "could not be reached") {
		t.Fatalf("unreachable provider: %s", r)
	}
	var saved agentline.ProviderAccount
	must(200, "PUT", "/api/projects/"+itoa(pA.p.ID)+"/providers/openai", map[string]string{"api_key": keyA, "base_url": a.url + "/"}, &saved)
	if saved.Kind != "openai" || saved.BaseURL != a.url || saved.KeyLast4 != "AAAA" || saved.UpdatedAt.IsZero() {
		t.Fatalf("saved: %+v", saved)
	}
	must(200, "PUT", "/api/projects/"+itoa(pB.p.ID)+"/providers/openai", map[string]string{"api_key": keyB, "base_url": b.url}, nil)
	var list []map[string]any
	must(200, "GET", "/api/projects/"+itoa(pA.p.ID)+"/providers", nil, &list)
	if len(list) != 1 || list[0]["key_last4"] != "AAAA" || len(list[0]) != 4 {
		t.Fatalf("list: %+v", list)
	}
	// The short list pages like the others read whole: a limit, and the
	// next cursor in X-Next-Cursor.
	must(200, "PUT", "/api/projects/"+itoa(pA.p.ID)+"/providers/gemini", map[string]string{"api_key": keyA, "base_url": a.url}, nil)
	r = s.Must(t, 200, "GET", "/api/projects/"+itoa(pA.p.ID)+"/providers?limit=1", tok, nil, &list)
	next := r.Header.Get("X-Next-Cursor")
	if len(list) != 1 || list[0]["kind"] != "gemini" || next == "" {
		t.Fatalf("first page: %+v %q", list, next)
	}
	s.Must(t, 200, "GET", "/api/projects/"+itoa(pA.p.ID)+"/providers?limit=1&cursor="+next, tok, nil, &list)
	if len(list) != 1 || list[0]["kind"] != "openai" {
		t.Fatalf("second page: %+v", list)
	}
	if r := s.Do(t, "GET", "/api/projects/"+itoa(pA.p.ID)+"/providers?cursor=not*a*cursor", tok, nil); r.Status != 400 {
		t.Fatalf("bad cursor: %s", r)
	}
	if gemini := a.tokens.Requests(); gemini[len(gemini)-1].Path != "/v1beta/models" || gemini[len(gemini)-1].Header.Get("X-Goog-Api-Key") != keyA {
		t.Fatalf("the Gemini key was not checked with x-goog-api-key: %+v", gemini[len(gemini)-1])
	}
	// A Gemini-kind agent of the project mints its token with the project's
	// Gemini account, and the browser is sent to that provider's Live socket.
	var gem agentline.Agent
	var gemCh agentline.Channel
	var gemKey struct{ Key string }
	must(201, "POST", "/api/projects/"+itoa(pA.p.ID)+"/agents", map[string]any{"name": "Gem", "model": "gemini-2.5-flash-native-audio"}, &gem)
	must(201, "POST", "/api/projects/"+itoa(pA.p.ID)+"/channels", map[string]any{"type": "voice_widget", "name": "gem", "agent_id": gem.ID}, &gemCh)
	must(201, "POST", "/api/channels/"+itoa(gemCh.ID)+"/key", map[string]any{"allowed_origins": []string{"https://shop.example.com"}}, &gemKey)
	greq := s.Request(t, "POST", "/widget/v1/session", "", map[string]any{"agent_id": gem.ID})
	greq.Header.Set("X-API-Key", gemKey.Key)
	greq.Header.Set("Origin", "https://shop.example.com")
	gr := s.Send(t, greq)
	answers.Write(gr.Body)
	if gr.Status != 201 || !strings.Contains(string(gr.Body), `"url":"ws://`+strings.TrimPrefix(a.url, "http://")+`/ws/`) {
		t.Fatalf("Gemini session: %s", gr)
	}
	if reqs := a.tokens.Requests(); reqs[len(reqs)-1].Path != "/v1alpha/auth_tokens" || reqs[len(reqs)-1].Header.Get("X-Goog-Api-Key") != keyA {
		t.Fatalf("the Gemini token was not minted with the project's key: %+v", reqs[len(reqs)-1].Path)
	}
	must(200, "GET", "/api/projects/"+itoa(pB.p.ID)+"/providers/openai", nil, nil)
	must(404, "GET", "/api/projects/"+itoa(pB.p.ID)+"/providers/gemini", nil, nil)

	for _, pr := range projects {
		// The widget session's secret is minted at the project's provider,
		// and the browser is sent there.
		req := s.Request(t, "POST", "/widget/v1/session", "", map[string]any{"agent_id": pr.agent.ID})
		req.Header.Set("X-API-Key", pr.key)
		req.Header.Set("Origin", "https://shop.example.com")
		r := s.Send(t, req)
		answers.Write(r.Body)
		var sess struct {
			Connect struct{ URL string } `json:"connect"`
		}
		r.JSON(t, &sess)
		if r.Status != 201 || sess.Connect.URL != pr.via.url+"/v1/realtime/calls" {
			t.Fatalf("project %d's session: %s", pr.p.ID, r)
		}
		// A phone call reaches the project's realtime model, and its
		// analysis the project's text API.
		phoneCall(t, s, pr.p.ID, pr.phone, pr.via)
	}
	for i, f := range []*fakeProvider{a, b, d} {
		secrets := 0
		for _, q := range f.tokens.Requests() {
			if q.Path == "/v1/realtime/client_secrets" {
				secrets++
			}
		}
		if secrets != 1 || len(f.text.Requests()) != 1 {
			t.Errorf("provider %d: %d client secrets, %d analyses; want one of each", i, secrets, len(f.text.Requests()))
		}
	}

	// Removed, the project's calls fall back to the deployment's account.
	must(204, "DELETE", "/api/projects/"+itoa(pB.p.ID)+"/providers/openai", nil, nil)
	must(404, "DELETE", "/api/projects/"+itoa(pB.p.ID)+"/providers/openai", nil, nil)
	req := s.Request(t, "POST", "/widget/v1/session", "", map[string]any{"agent_id": pB.agent.ID})
	req.Header.Set("X-API-Key", pB.key)
	req.Header.Set("Origin", "https://shop.example.com")
	if r := s.Send(t, req); r.Status != 201 || !strings.Contains(string(r.Body), d.url) {
		t.Fatalf("after delete: %s", r)
	}

	for _, pr := range projects {
		for _, csv := range []string{"/analytics.csv", "/leads.csv"} {
			r := s.Do(t, "GET", "/api/projects/"+itoa(pr.p.ID)+csv, tok, nil)
			answers.Write(r.Body)
		}
	}
	s.Stop(t)
	raw, err := os.ReadFile(strings.TrimPrefix(dbURL, "sqlite:"))
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(strings.TrimPrefix(dbURL, "sqlite:") + "-wal")
	for where, text := range map[string]string{"API answers": answers.String(), "logs": logs.String(), "database file": string(raw) + string(wal)} {
		for _, key := range []string{keyA, keyB, wrong, keyA[:len(keyA)-4], keyB[4:]} {
			if strings.Contains(text, key) {
				t.Errorf("a key is in the %s", where)
			}
		}
	}
	if !strings.Contains(logs.String(), `"msg":"provider account saved"`) {
		t.Error("the saves were not logged at all: the log check proves nothing")
	}
}

// phoneCall places an inbound call to the project's number, has the caller
// say something, hangs up and waits for the call's analysis, which via
// must have answered.
func phoneCall(t *testing.T, s *apptest.Server, projectID int64, number string, via *fakeProvider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := callsim.Inbound(ctx, http.DefaultClient, s.URL, "+14155550199", number,
		callsim.Options{EchoMarks: true, AuthToken: carrierToken, BotHost: "bot.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ss, err := via.realtime.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitType(ctx, "session.update"); err != nil {
		t.Fatal(err)
	}
	ss.Send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_1", "transcript": "When does my order ship?"})
	db := s.App.Store
	call, err := db.Call(ctx, projectID, c.CallSID)
	if err != nil {
		t.Fatal(err)
	}
	id := agentline.CallConversationID(call.ID)
	var conv agentline.Conversation
	for i := 0; i < 1000 && len(conv.Transcript) < 1; i++ {
		time.Sleep(10 * time.Millisecond)
		conv, _ = db.Conversation(ctx, projectID, id)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3000 { // the analysis waits 3 s after the end, then asks
		if conv, err = db.Conversation(ctx, projectID, id); err == nil && conv.Analysis != nil && conv.Analysis.Status != agentline.AnalysisPending {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if conv.Analysis == nil || conv.Analysis.Status != agentline.AnalysisDone {
		t.Fatalf("analysis of project %d's call: %+v", projectID, conv.Analysis)
	}
}

// A console test call needs a realtime model: with no deployment key, a
// project with its own account gets one, its stream reaching its own
// provider; a project without gets 503 not_configured.
func TestTestCallUsesTheProjectsAccount(t *testing.T) {
	t.Parallel()
	own := newFakeProvider(t, keyA)
	s := apptest.Start(t, apptest.Config(t, storetest.URL(t, store.SQLite), map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "TWILIO_AUTH_TOKEN": carrierToken,
		"AGENTLINE_ALLOW_PRIVATE_WEBHOOKS": "true",
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, tok := s.NewUser(t, "owner@example.com")
	var with, without agentline.Project
	var ada, bea agentline.Agent
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "With"}, &with)
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]any{"name": "Without"}, &without)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(with.ID)+"/agents", tok, map[string]string{"name": "Ada"}, &ada)
	s.Must(t, 201, "POST", "/api/projects/"+itoa(without.ID)+"/agents", tok, map[string]string{"name": "Bea"}, &bea)
	// The console's Test tab connects to whatever provider a project's
	// account names: its page admits any https (and, in development, http)
	// provider origin, and scripts only from itself.
	page := s.Do(t, "GET", "/", "", nil)
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") || !strings.Contains(csp, " https: wss:") ||
		!strings.Contains(csp, " http: ws:") || !strings.Contains(csp, "script-src 'self';") {
		t.Errorf("console CSP: %s", csp)
	}
	if r := s.Do(t, "POST", "/api/agents/"+itoa(bea.ID)+"/test-calls", tok, nil); r.Status != 503 || r.ErrorCode() != agentline.ENotConfigured {
		t.Fatalf("without any key: %s", r)
	}
	s.Must(t, 200, "PUT", "/api/projects/"+itoa(with.ID)+"/providers/openai", tok, map[string]string{"api_key": keyA, "base_url": own.url}, nil)
	var tc testCallStarted
	s.Must(t, 201, "POST", "/api/agents/"+itoa(ada.ID)+"/test-calls", tok, nil, &tc)
	call, err := openTestCall(ctx, s, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer call.Close()
	ss, err := own.realtime.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitType(ctx, "session.update"); err != nil {
		t.Fatal(err)
	}
}
