package agentline_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentline/agentline"
)

func TestProviderForModel(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  agentline.Provider
	}{
		{"gpt-realtime", agentline.ProviderOpenAI},
		{"gpt-realtime-mini", agentline.ProviderOpenAI},
		{"gpt-realtime-2025-08-28", agentline.ProviderOpenAI},
		{"GPT-Realtime", agentline.ProviderOpenAI},
		{" gpt-realtime ", agentline.ProviderOpenAI},
		{"gpt-4o-realtime-preview", agentline.ProviderOpenAI},
		{"gpt-4o-realtime-preview-2024-12-17", agentline.ProviderOpenAI},
		{"gpt-4o-mini-realtime-preview", agentline.ProviderOpenAI},
		{"gemini-live-2.5-flash-preview", agentline.ProviderGemini},
		{"gemini-2.0-flash-live-001", agentline.ProviderGemini},
		{"gemini-2.5-flash-native-audio-preview-09-2025", agentline.ProviderGemini},
		{"gemini-2.5-flash-preview-native-audio-dialog", agentline.ProviderGemini},
		{"gpt-4o", ""},
		{"gpt-4o-mini-tts", ""},
		{"gemini-2.5-flash", ""},
		{"realtime", ""},
		{"my-gpt-realtime", ""},
		{"", ""},
	} {
		got, err := agentline.ProviderForModel(tc.model)
		if got != tc.want {
			t.Errorf("%q = %q, want %q", tc.model, got, tc.want)
		}
		if tc.want == "" {
			var e *agentline.Error
			if !errors.As(err, &e) || e.Code != agentline.EInvalid || e.Field != "model" ||
				!strings.Contains(e.Message, "gpt-realtime*") || !strings.Contains(e.Message, "gemini-*native-audio*") {
				t.Errorf("%q: error %v should be invalid_request on model naming the accepted patterns", tc.model, err)
			}
		}
	}
}

func TestAgentValidate(t *testing.T) {
	a := agentline.Agent{Name: "  Ada  "}
	if err := a.Validate(); err != nil {
		t.Fatal(err)
	}
	if a.Name != "Ada" || a.Model != "gpt-realtime" || a.Provider != agentline.ProviderOpenAI || a.Voice != "marin" || a.Language != "en" {
		t.Fatalf("defaults = %+v", a)
	}
	g := agentline.Agent{Name: "G", Model: "gemini-live-2.5-flash-preview", Language: "de-DE"}
	if err := g.Validate(); err != nil || g.Provider != agentline.ProviderGemini || g.Voice != "Puck" {
		t.Fatalf("gemini agent = %+v %v", g, err)
	}
	for _, tc := range []struct {
		agent agentline.Agent
		field string
	}{
		{agentline.Agent{Name: " "}, "name"},
		{agentline.Agent{Name: strings.Repeat("n", 201)}, "name"},
		{agentline.Agent{Name: "a", Instructions: strings.Repeat("i", 100_001)}, "instructions"},
		{agentline.Agent{Name: "a", Greeting: strings.Repeat("g", 2001)}, "greeting"},
		{agentline.Agent{Name: "a", Model: "whisper-1"}, "model"},
		{agentline.Agent{Name: "a", Voice: strings.Repeat("v", 101)}, "voice"},
		{agentline.Agent{Name: "a", Language: "english"}, "language"},
		{agentline.Agent{Name: "a", Language: "e"}, "language"},
		{agentline.Agent{Name: "a", Language: "en_US"}, "language"},
		{agentline.Agent{Name: "a", Language: "en-"}, "language"},
	} {
		err := tc.agent.Validate()
		var e *agentline.Error
		if !errors.As(err, &e) || e.Code != agentline.EInvalid || e.Field != tc.field {
			t.Errorf("%.60v: %v, want invalid_request on %s", tc.agent, err, tc.field)
		}
	}
	for _, lang := range []string{"en", "EN", "en-US", "zh-Hant-TW", "sr-Latn", "es-419", "fil"} {
		if !agentline.ValidLanguage(lang) {
			t.Errorf("%q should be a valid language tag", lang)
		}
	}
}

func TestRolePermissions(t *testing.T) {
	want := map[agentline.Role]string{
		agentline.RoleOwner:  "[PROJECT:VIEW PROJECT:CREATE PROJECT:DELETE]",
		agentline.RoleEditor: "[PROJECT:VIEW PROJECT:CREATE]",
		agentline.RoleViewer: "[PROJECT:VIEW]",
		"admin":              "[]",
		"":                   "[]",
	}
	for role, perms := range want {
		if got := fmt.Sprint(role.Permissions()); got != perms {
			t.Errorf("%q grants %s, want %s", role, got, perms)
		}
		if role.Can("PROJECT:EVERYTHING") {
			t.Errorf("%q grants an unknown permission", role)
		}
	}
}

func TestErrors(t *testing.T) {
	nf := fmt.Errorf("load: %w", agentline.NotFound("agent"))
	if !errors.Is(nf, agentline.ErrNotFound) || agentline.ErrorCode(nf) != agentline.ENotFound || agentline.ErrorMessage(nf) != "agent not found" {
		t.Fatalf("not found: %v %q %q", nf, agentline.ErrorCode(nf), agentline.ErrorMessage(nf))
	}
	if errors.Is(agentline.Errorf(agentline.EConflict, "x"), agentline.ErrNotFound) {
		t.Fatal("a conflict is not a not-found")
	}
	plain := errors.New("disk on fire")
	if agentline.ErrorCode(plain) != agentline.EInternal || agentline.ErrorMessage(plain) != "internal error" || agentline.ErrorCode(nil) != "" {
		t.Fatal("plain errors must be internal with a generic message")
	}
	wrapped := &agentline.Error{Code: agentline.EProvider, Message: "the provider failed", Err: plain}
	if !errors.Is(wrapped, plain) || !strings.Contains(wrapped.Error(), "disk on fire") || agentline.ErrorMessage(wrapped) != "the provider failed" {
		t.Fatalf("cause: %v", wrapped)
	}
}

func TestAnalysisSettingsValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    agentline.AnalysisSettings
		field string
	}{
		{"default", agentline.DefaultAnalysis(), ""},
		{"schema", agentline.AnalysisSettings{DataSchema: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}}}`)}, ""},
		{"null schema", agentline.AnalysisSettings{DataSchema: json.RawMessage(`null`)}, ""},
		{"not an object", agentline.AnalysisSettings{DataSchema: json.RawMessage(`{"type":"string"}`)}, "analysis.data_schema"},
		{"no properties", agentline.AnalysisSettings{DataSchema: json.RawMessage(`{"type":"object"}`)}, "analysis.data_schema"},
		{"broken", agentline.AnalysisSettings{DataSchema: json.RawMessage(`[1`)}, "analysis.data_schema"},
		{"long criteria", agentline.AnalysisSettings{SuccessCriteria: strings.Repeat("x", 5001)}, "analysis.success_criteria"},
	} {
		err := c.in.Validate()
		var e *agentline.Error
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &e) || e.Field != c.field):
			t.Errorf("%s: got %v, want an error on %s", c.name, err, c.field)
		}
	}
}
