package agentline

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// ProviderCredentials are what reaching a provider takes: its base URL and
// API key, either a project's own (its provider account) or the
// deployment's (OPENAI_* and GEMINI_* settings).
type ProviderCredentials struct {
	BaseURL string
	APIKey  string
	// Project is set when they are the project's own account's.
	Project bool
}

// String never shows the key, so credentials printed by mistake in a log
// line or an error leak nothing.
func (c ProviderCredentials) String() string {
	return fmt.Sprintf("{BaseURL:%s APIKey:[redacted] Project:%v}", c.BaseURL, c.Project)
}

// LogValue keeps the key out of slog output.
func (c ProviderCredentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// ProviderAccount is a project's own account with a provider kind. The key
// is kept sealed (encrypted at rest); only its last four characters are
// ever shown.
type ProviderAccount struct {
	ProjectID int64     `json:"-"`
	Kind      Provider  `json:"kind"`
	BaseURL   string    `json:"base_url"`
	KeyLast4  string    `json:"key_last4"`
	UpdatedAt time.Time `json:"updated_at"`
	// SealedKey is the API key as sealed by the encryption key; never
	// answered.
	SealedKey string `json:"-"`
}

// ProviderKeyContext is the additional data a provider account's key is
// sealed with: a sealed key copied to another project's or kind's row does
// not open there.
func ProviderKeyContext(projectID int64, kind Provider) string {
	return fmt.Sprintf("provider_accounts/%d/%s", projectID, kind)
}

// EncryptionKeySize is the size of an AGENTLINE_ENCRYPTION_KEY key: 32
// bytes, AES-256.
const EncryptionKeySize = 32

// ParseEncryptionKeys parses AGENTLINE_ENCRYPTION_KEY: base64 keys of 32
// bytes separated by commas; the first seals, all open. Empty is no key.
// The message never repeats a key.
func ParseEncryptionKeys(s string) ([][]byte, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var keys [][]byte
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		k, err := base64.StdEncoding.DecodeString(part)
		if err != nil {
			k, err = base64.RawStdEncoding.DecodeString(part)
		}
		if err != nil {
			return nil, fmt.Errorf("AGENTLINE_ENCRYPTION_KEY: key %d is not base64 (make one with: openssl rand -base64 32)", i+1)
		}
		if len(k) != EncryptionKeySize {
			return nil, fmt.Errorf("AGENTLINE_ENCRYPTION_KEY: key %d is %d bytes, not %d (make one with: openssl rand -base64 32)", i+1, len(k), EncryptionKeySize)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("AGENTLINE_ENCRYPTION_KEY: no key")
	}
	return keys, nil
}
