package agentline_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
)

func TestNewSessionView(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	v := agentline.NewSessionView(agentline.SessionWithEvents{
		WidgetSession: agentline.WidgetSession{ID: "ses_1"},
		Events: []agentline.SessionEvent{
			{Type: agentline.EventTranscript, At: at, Data: json.RawMessage(`{"role":"user","text":"hi"}`)},
			{Type: agentline.EventToolCall, At: at, Data: json.RawMessage(`{"name":"lookup_order"}`)},
			{Type: agentline.EventSessionStarted, At: at, Data: json.RawMessage(`{}`)},
		},
	})
	raw, _ := json.Marshal(v)
	for _, want := range []string{`"id":"ses_1"`, `"transcript":[{"role":"user","text":"hi","at":"2026-03-01T12:00:00Z"}]`,
		`"tool_calls":[{"at":"2026-03-01T12:00:00Z","name":"lookup_order"}]`, `"errors":[]`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("view %s lacks %s", raw, want)
		}
	}
}

func TestNewSessionID(t *testing.T) {
	a, err := agentline.NewSessionID()
	b, _ := agentline.NewSessionID()
	if err != nil || len(a) != 28 || !strings.HasPrefix(a, "ses_") || strings.Trim(a[4:], agentline.Base62) != "" || a == b {
		t.Errorf("ids %q, %q, err %v", a, b, err)
	}
}
