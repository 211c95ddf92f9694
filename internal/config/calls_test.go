package config

import (
	"strings"
	"testing"
	"time"
)

func TestMaxCallDuration(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	if c, err := Load(nil, env(map[string]string{"AGENTLINE_MAX_CALL_DURATION": "90s"})); err != nil || c.MaxCallDuration != 90*time.Second {
		t.Fatalf("env: %v %v", c.MaxCallDuration, err)
	}
	if c, err := Load([]string{"-max-call-duration", "1h"}, env(nil)); err != nil || c.MaxCallDuration != time.Hour {
		t.Fatalf("flag: %v %v", c.MaxCallDuration, err)
	}
	for _, bad := range []string{"0s", "-1m", "long"} {
		if _, err := Load(nil, env(map[string]string{"AGENTLINE_MAX_CALL_DURATION": bad})); err == nil || !strings.Contains(err.Error(), "AGENTLINE_MAX_CALL_DURATION") {
			t.Errorf("AGENTLINE_MAX_CALL_DURATION=%s: %v", bad, err)
		}
	}
}
