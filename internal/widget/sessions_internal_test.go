package widget

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentline/agentline"
)

func TestToolArguments(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{`{"id":"1"}`, `{"id":"1"}`},
		{`"{\"id\":\"1\"}"`, `{"id":"1"}`},
		{`""`, `{}`},
		{`[1]`, ``},
		{`"[1]"`, ``},
		{`"{"`, ``},
		{`3`, ``},
	}
	for _, tt := range tests {
		got, err := toolArguments(json.RawMessage(tt.in))
		if tt.want == "" {
			if agentline.ErrorCode(err) != agentline.EInvalid {
				t.Errorf("%s: err = %v", tt.in, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s %v, want %s", tt.in, got, err, tt.want)
		}
	}
}

// Whatever a client reports, an event is either accepted as a JSON object
// or refused with invalid_request: never a panic, never anything else.
func FuzzCheckEvent(f *testing.F) {
	f.Add("transcript", `{"role":"user","text":"hi"}`)
	f.Add("error", `null`)
	f.Add("tool_call", `[]`)
	f.Add("click", `{}`)
	now := time.Now()
	f.Fuzz(func(t *testing.T, typ, data string) {
		ev, err := checkEvent(0, typ, nil, json.RawMessage(data), now)
		if err != nil {
			if agentline.ErrorCode(err) != agentline.EInvalid {
				t.Fatalf("err = %v", err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(ev.Data, &obj) != nil {
			t.Fatalf("accepted data %q", ev.Data)
		}
	})
}
