package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// TestCallSandboxWithoutBotHost is the phone sandbox's first step, as the README
// has it: the server runs `TELEPHONY_ENABLED=true BOT_HOST=localhost serve
// --sandbox`, and `agentline call` runs in another shell, without
// BOT_HOST. The call learns the host the sandbox signs for from the
// server, and goes through; the sandbox model greets the caller.
func TestCallSandboxWithoutBotHost(t *testing.T) {
	s := apptest.StartFresh(t, store.SQLite, map[string]string{
		"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "localhost",
	})
	ctx := context.Background()
	owner, _ := s.NewUser(t, "owner@example.com")
	p, err := s.App.Store.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := s.App.Store.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ada", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI, Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.App.Store.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550100", AgentID: &agent.ID, Status: agentline.NumberActive, CarrierSID: "PN1"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "answer.wav")
	// The shell of `agentline call` has neither BOT_HOST nor TWILIO_AUTH_TOKEN.
	stdout, err := runCmd(t, nil, "call", "--server", s.URL, "--to", "+14155550100", "--out", out, "--listen", "1500ms")
	if err != nil {
		t.Fatalf("call without BOT_HOST against the sandbox: %v\n%s", err, stdout)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if heard, err := callsim.ReadWAV(f); err != nil || len(heard) == 0 {
		t.Fatalf("the sandbox agent said nothing (%d bytes, %v)\n%s", len(heard), err, stdout)
	}

	// A --bot-host given by hand still wins, and a wrong one is refused
	// with a message that names the URL expected and the setting.
	_, err = runCmd(t, nil, "call", "--server", s.URL, "--to", "+14155550100", "--bot-host", "elsewhere.example", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "https://localhost/api/telephony/inbound") || !strings.Contains(err.Error(), "BOT_HOST") {
		t.Fatalf("a wrong --bot-host: err = %v, want a 403 naming https://localhost/api/telephony/inbound and BOT_HOST", err)
	}
}
