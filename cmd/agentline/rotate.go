package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/secretbox"
)

// rotateEncryption reseals every stored secret under the first key of
// AGENTLINE_ENCRYPTION_KEY. Values already under it are left alone, so it
// may run again after an interruption; once it has run, keys after the
// first can be removed from the list.
func rotateEncryption(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return err
	}
	keys, err := agentline.ParseEncryptionKeys(cfg.EncryptionKeys)
	if err != nil {
		return err
	}
	var box *secretbox.Box
	if len(keys) == 0 {
		if cfg.Production() {
			return errors.New("rotate-encryption: AGENTLINE_ENCRYPTION_KEY is not set: list the new key first, then the old ones, comma-separated")
		}
		// Development: the key file's key; nothing to rotate from, but the
		// run checks that every value opens.
		box, err = secretbox.Settle(secretbox.Settings{KeyFile: cfg.EncryptionKeyFile(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	} else {
		box, err = secretbox.New(keys)
	}
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.ResealSecrets(ctx, box.Reseal)
	if err != nil {
		return fmt.Errorf("rotate-encryption: %w (nothing of that table was changed; fix the key list and run it again)", err)
	}
	fmt.Fprintf(stdout, "resealed %d secret(s) under key %s; every stored secret now opens with it alone\n", n, box.SealingKeyID())
	return nil
}
