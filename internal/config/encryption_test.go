package config

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestEncryptionKeySetting(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(make([]byte, 32))
	other := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	for _, tc := range []struct {
		value, want string
	}{
		{"", ""},
		{good, ""},
		{good + "," + other, ""},
		{"not base64!", "key 1 is not base64"},
		{good + "," + base64.StdEncoding.EncodeToString(make([]byte, 16)), "key 2 is 16 bytes, not 32"},
	} {
		_, err := Load(nil, func(k string) string {
			if k == "AGENTLINE_ENCRYPTION_KEY" {
				return tc.value
			}
			return ""
		})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.value, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want one containing %q", tc.value, err, tc.want)
		case err != nil && strings.Contains(err.Error(), tc.value):
			t.Errorf("the error repeats the key: %v", err)
		}
	}
}

func TestEncryptionKeyFile(t *testing.T) {
	for url, want := range map[string]string{
		"sqlite:/var/lib/agentline/agentline.db": "/var/lib/agentline/encryption.key",
		"sqlite:agentline.db":                    "encryption.key",
		"sqlite::memory:":                        "",
		"postgres://db/agentline":                "encryption.key",
	} {
		c := Config{DatabaseURL: url}
		if got := c.EncryptionKeyFile(); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
}
