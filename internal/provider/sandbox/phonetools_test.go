package sandbox

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// The scripted function call skips the tools the phone relay adds (a
// campaign call's opt_out among them): calling one would hang up, transfer
// or opt the caller out of every campaign instead of showing a tool call.
func TestFirstToolSkipsPhoneOnlyTools(t *testing.T) {
	var sent []string
	c := &call{id: "sess_0123456789ab", log: slog.New(slog.DiscardHandler), out: func(b []byte) error {
		sent = append(sent, string(b))
		return nil
	}}
	if err := json.Unmarshal([]byte(`{"tools":[{"name":"end_call"},{"name":"transfer_call"},{"name":"opt_out"},
		{"name":"order_status","parameters":{"type":"object","properties":{"order":{"type":"string"}}}}]}`), &c.session); err != nil {
		t.Fatal(err)
	}
	if c.firstTool() == "" {
		t.Fatal("no tool was called")
	}
	all := strings.Join(sent, "\n")
	if !strings.Contains(all, `"name":"order_status"`) || strings.Contains(all, "opt_out") {
		t.Fatalf("sent %s", all)
	}
}
