package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentline/agentline/internal/config"
)

// Recordings go beside the SQLite file unless told otherwise; an s3 URL is
// checked at start; the bucket's credentials come from the AWS_* variables.
func TestRecordingsSettings(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, "recordings"},
		{map[string]string{"AGENTLINE_DATABASE_URL": "sqlite:/var/lib/agentline/agentline.db"}, filepath.FromSlash("/var/lib/agentline/recordings")},
		{map[string]string{"AGENTLINE_DATABASE_URL": "sqlite:data/a.db?_pragma=x"}, filepath.FromSlash("data/recordings")},
		{map[string]string{"AGENTLINE_DATABASE_URL": "sqlite::memory:"}, "recordings"},
		{map[string]string{"AGENTLINE_DATABASE_URL": "postgres://db/agentline"}, "recordings"},
		{map[string]string{"AGENTLINE_DATABASE_URL": "postgres://db/agentline", "AGENTLINE_RECORDINGS_DIR": "/srv/rec"}, "/srv/rec"},
	} {
		c, err := config.Load(nil, env(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.RecordingsDirectory(); got != tc.want {
			t.Errorf("%v: recordings directory %q, want %q", tc.env, got, tc.want)
		}
	}
	vars := map[string]string{"AGENTLINE_RECORDINGS_URL": "https://bucket.example.com", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"}
	if _, err := config.Load(nil, env(vars)); err == nil || !strings.Contains(err.Error(), "AGENTLINE_RECORDINGS_URL") {
		t.Fatalf("an https recordings URL: %v", err)
	}
	vars["AGENTLINE_RECORDINGS_URL"] = "s3://calls/agentline?endpoint=127.0.0.1:9000&secure=false"
	c, err := config.Load(nil, env(vars))
	if err != nil || c.RecordingsCredentials.AccessKeyID != "AKID" || c.RecordingsCredentials.SecretAccessKey != "secret" {
		t.Fatalf("s3 settings: %+v %v", c.RecordingsCredentials, err)
	}
}
