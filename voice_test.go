package agentline_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentline/agentline"
)

func TestRealtimeVoice(t *testing.T) {
	for name, want := range map[string]struct {
		voice string
		known bool
	}{
		"": {"marin", true}, "cedar": {"cedar", true}, " Nova ": {"coral", true}, "Puck": {"verse", true}, "nonesuch": {"marin", false},
	} {
		if v, known := agentline.RealtimeVoice(name); v != want.voice || known != want.known {
			t.Errorf("RealtimeVoice(%q) = %q, %v; want %q, %v", name, v, known, want.voice, want.known)
		}
	}
}

// Every model the console offers is one ProviderForModel accepts for its
// provider, and every voice is in the realtime table (known), so that the
// pickers never offer what the API would refuse or map to the default.
func TestCatalogIsValid(t *testing.T) {
	for _, m := range agentline.KnownModels() {
		if p, err := agentline.ProviderForModel(m.Name); err != nil || p != m.Provider {
			t.Errorf("model %s: provider %q, %v; listed as %s", m.Name, p, err, m.Provider)
		}
	}
	seen := map[agentline.Provider]int{}
	for _, v := range agentline.Voices() {
		seen[v.Provider]++
		if rt, known := agentline.RealtimeVoice(v.Name); !known || rt != v.RealtimeVoice {
			t.Errorf("voice %s maps to %q (known %v), listed as %q", v.Name, rt, known, v.RealtimeVoice)
		}
	}
	for p, def := range agentline.DefaultVoices() {
		found := false
		for _, v := range agentline.Voices() {
			found = found || (v.Provider == p && v.Name == def)
		}
		if !found || seen[p] < 5 {
			t.Errorf("provider %s: %d voices, default %s listed: %v", p, seen[p], def, found)
		}
	}
}

// CatalogVoice takes a provider's catalog voices in any case and refuses
// the rest, listing the provider's voices.
func TestCatalogVoice(t *testing.T) {
	for _, tc := range []struct {
		p          agentline.Provider
		name, want string
	}{
		{agentline.ProviderOpenAI, "cedar", "cedar"}, {agentline.ProviderOpenAI, " Nova ", "nova"},
		{agentline.ProviderGemini, "kore", "Kore"}, {agentline.ProviderGemini, "Puck", "Puck"},
	} {
		if v, err := agentline.CatalogVoice(tc.p, "m", tc.name); err != nil || v != tc.want {
			t.Errorf("CatalogVoice(%s, %q) = %q, %v; want %q", tc.p, tc.name, v, err, tc.want)
		}
	}
	for _, tc := range []struct {
		p          agentline.Provider
		name, says string
	}{
		{agentline.ProviderOpenAI, "darth", "marin, cedar, alloy"}, {agentline.ProviderOpenAI, "Puck", "nova"},
		{agentline.ProviderGemini, "marin", "Puck, Charon"}, {agentline.ProviderGemini, "", "Zephyr"},
	} {
		_, err := agentline.CatalogVoice(tc.p, "m", tc.name)
		var e *agentline.Error
		if !errors.As(err, &e) || e.Field != "voice" || !strings.Contains(e.Message, tc.says) {
			t.Errorf("CatalogVoice(%s, %q) = %v; want invalid voice saying %q", tc.p, tc.name, err, tc.says)
		}
	}
}

func TestGeminiVoice(t *testing.T) {
	for name, want := range map[string]string{"": "Puck", "kore": "Kore", " Charon ": "Charon", "marin": "Kore", "shimmer": "Aoede", "nova": "Leda"} {
		if got, known := agentline.GeminiVoice(name); got != want || !known {
			t.Errorf("GeminiVoice(%q) = %q, %v; want %q", name, got, known, want)
		}
	}
	if got, known := agentline.GeminiVoice("zork"); got != agentline.DefaultGeminiVoice || known {
		t.Errorf("unknown voice = %q, %v", got, known)
	}
	// Every OpenAI voice has a Gemini one, and it is a catalog voice.
	for _, v := range agentline.Voices() {
		g, known := agentline.GeminiVoice(v.Name)
		if !known {
			t.Errorf("voice %s has no Gemini voice", v.Name)
		}
		if _, err := agentline.CatalogVoice(agentline.ProviderGemini, "gemini-live", g); err != nil {
			t.Errorf("voice %s maps to %s: %v", v.Name, g, err)
		}
	}
}
