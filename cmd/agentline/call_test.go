package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// TestCallSimulator calls a running server whose model echoes the caller:
// what the agent said must be what the caller's WAV file held.
func TestCallSimulator(t *testing.T) {
	model := realtimefake.New("sk-test")
	model.Echo = true
	defer model.Close()
	dir := t.TempDir()
	vars := map[string]string{
		"AGENTLINE_DATABASE_URL": "sqlite:" + filepath.Join(dir, "test.db"), "AGENTLINE_ADMIN_EMAIL": "owner@example.com",
		"AGENTLINE_ADMIN_PASSWORD": "owner-password", "AGENTLINE_PASSWORD_COST": "4", "TELEPHONY_ENABLED": "true",
		"BOT_HOST": "bot.example.test", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": model.URL(),
		"TWILIO_AUTH_TOKEN": "0123456789abcdef0123456789abcdef", // the call is signed with it
	}
	cfg, err := config.Load(nil, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	owner, _, _ := a.Store.UserByEmail(ctx, "owner@example.com")
	p, _ := a.Store.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	agent, err := a.Store.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ada", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI, Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550100", AgentID: &agent.ID, Status: agentline.NumberActive, CarrierSID: "PN1"}); err != nil {
		t.Fatal(err)
	}

	// 0.3 s of caller audio as a mu-law WAV.
	said := make([]byte, 2400)
	for i := range said {
		said[i] = byte(i)
	}
	in, out := filepath.Join(dir, "in.wav"), filepath.Join(dir, "out.wav")
	var b bytes.Buffer
	callsim.WriteWAV(&b, said)
	os.WriteFile(in, b.Bytes(), 0o600)
	stdout, err := runCmd(t, vars, "call", "--server", srv.URL, "--to", "+14155550100", "--in", in, "--out", out, "--listen", "300ms")
	if err != nil {
		t.Fatalf("call: %v\n%s", err, stdout)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	heard, err := callsim.ReadWAV(f)
	if err != nil || !bytes.Equal(heard, said) {
		t.Fatalf("the agent's audio (%d bytes, %v) is not the echo of the caller's (%d bytes)\n%s", len(heard), err, len(said), stdout)
	}
	if !strings.Contains(stdout, "wrote 0.3 s of the agent's audio") {
		t.Fatalf("stdout = %q", stdout)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call"}, "usage"},
		{[]string{"call", "--to", "+14155550100", "--in", filepath.Join(dir, "missing.wav")}, "missing.wav"},
		{[]string{"call", "--to", "+14155550100", "--in", out + "x"}, "no such file"},
		{[]string{"call", "--server", srv.URL, "--to", "+14155550199", "--out", filepath.Join(dir, "none.wav")}, "not in service"},
		{[]string{"call", "--server", srv.URL, "--to", "+14155550100", "--auth-token", "not-the-token", "--out", filepath.Join(dir, "none.wav")}, "403"},
	} {
		if _, err := runCmd(t, vars, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v = %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
