package config

import (
	"path/filepath"
	"strings"

	"github.com/agentline/agentline"
)

// encryptionErrors refuses an AGENTLINE_ENCRYPTION_KEY that cannot be a key
// list (not base64, not 32 bytes) at start, rather than at the first save
// or call that needs a stored secret. A missing key is no error: the app
// says at start what it means (internal/secretbox).
func (c *Config) encryptionErrors() []error {
	if _, err := agentline.ParseEncryptionKeys(c.EncryptionKeys); err != nil {
		return []error{err}
	}
	return nil
}

// EncryptionKeyFile is where development keeps the encryption key it makes
// when AGENTLINE_ENCRYPTION_KEY is not set: encryption.key beside the
// SQLite database file, or in the working directory on PostgreSQL; empty
// for an in-memory SQLite database, whose key lives as long as it does.
func (c *Config) EncryptionKeyFile() string {
	path, ok := strings.CutPrefix(c.DatabaseURL, "sqlite:")
	path = strings.TrimPrefix(path, "//")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	switch {
	case !ok:
		return "encryption.key"
	case path == "" || strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:"):
		return ""
	}
	return filepath.Join(filepath.Dir(path), "encryption.key")
}
