package secretbox

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/agentline/agentline"
)

// Settings are what Settle needs to choose the key list.
type Settings struct {
	// Keys is AGENTLINE_ENCRYPTION_KEY (checked by config).
	Keys string
	// Production refuses to make up a key: one kept only on the server's
	// disk would be lost with it, and every stored secret with it.
	Production bool
	// KeyFile is where development keeps the key it made; empty (an
	// in-memory database) makes one for this run only.
	KeyFile string
	Logger  *slog.Logger
}

// Settle returns the Box of the settings: the listed keys; without any, in
// development, the key of KeyFile (made and written, mode 0600, on first
// use); in production, nil (secrets cannot be stored, and the start says
// so).
func Settle(s Settings) (*Box, error) {
	log := s.Logger
	if log == nil {
		log = slog.Default()
	}
	keys, err := agentline.ParseEncryptionKeys(s.Keys)
	if err != nil {
		return nil, err
	}
	if len(keys) > 0 {
		return New(keys)
	}
	if s.Production {
		log.Warn("AGENTLINE_ENCRYPTION_KEY is not set: projects cannot save provider accounts, and any saved before cannot be used (see docs/deploy.md)")
		return nil, nil
	}
	k, err := devKey(s.KeyFile, log)
	if err != nil {
		return nil, err
	}
	return New([][]byte{k})
}

// devKey reads the key of path, or makes one and writes it there. The file
// is created exclusively, so two instances starting at once agree on the
// key the first one wrote.
func devKey(path string, log *slog.Logger) ([]byte, error) {
	k := make([]byte, agentline.EncryptionKeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, err
	}
	if path == "" {
		log.Warn("AGENTLINE_ENCRYPTION_KEY is not set: secrets stored in this in-memory database are sealed with a key made for this run")
		return k, nil
	}
	if old, err := readKeyFile(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return old, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("write the development encryption key: %w", err)
	}
	_, err = f.WriteString(base64.StdEncoding.EncodeToString(k) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write the development encryption key %s: %w", path, err)
	}
	log.Warn("AGENTLINE_ENCRYPTION_KEY is not set: made a development encryption key (set AGENTLINE_ENCRYPTION_KEY in production)", "file", path)
	return k, nil
}

func readKeyFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := agentline.ParseEncryptionKeys(strings.TrimSpace(string(raw)))
	if err != nil || len(keys) != 1 {
		return nil, fmt.Errorf("the development encryption key file %s is damaged (%v): restore it, or remove it and save the provider accounts again", path, err)
	}
	return keys[0], nil
}
