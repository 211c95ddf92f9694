// Command agentline runs the agentline server and its tools.
//
//	agentline [serve] [flags]                 run the server (the default)
//	agentline migrate [flags]                 apply database migrations and list them
//	agentline rotate-encryption [flags]       reseal every stored secret under the first AGENTLINE_ENCRYPTION_KEY
//	agentline user create --email [--password] [--admin]  create a user (password from stdin or AGENTLINE_USER_PASSWORD)
//	agentline user list                       list the accounts
//	agentline user reset-password --email     print a one-time link that sets the account's password
//	agentline call --to +1NUMBER              simulate a phone call against a running server
//	agentline version                         print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/agentline/agentline/internal/app"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/ratelimit"
	"github.com/agentline/agentline/internal/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, stdinIfPiped(), os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentline:", err)
		os.Exit(1)
	}
}

// run runs the command in args. stdin is nil when standard input is a
// terminal, since a password is never read from one (it would echo).
// Asked-for help (help, -h, --help, also after a command) is printed on
// stdout and is no error.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, getenv, stdin, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, err)
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	if cmd == "serve" && asksHelp(args) {
		cmd = "help"
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, args, getenv, stdout)
	case "rotate-encryption":
		return rotateEncryption(ctx, args, getenv, stdout)
	case "user":
		if asksHelp(args) {
			fmt.Fprintln(stdout, errUserUsage) // asked for: no failure
			return nil
		}
		return userCommand(ctx, args, getenv, stdin, stdout)
	case "call":
		return call(ctx, args, getenv, stdout)
	case "test":
		return testCommand(ctx, args, getenv, stdout)
	case "version":
		fmt.Fprintln(stdout, "agentline", versionString())
		return nil
	case "help":
		fmt.Fprint(stdout, "usage: agentline [serve|migrate|rotate-encryption|user create|user list|user reset-password|call|test|version|help] [flags]\nflags:\n"+config.Usage())
		return nil
	}
	return fmt.Errorf("unknown command %q: use serve, migrate, rotate-encryption, user (create, list, reset-password), call, test or version", cmd)
}

// asksHelp reports whether args start with a request for help, in any
// of the flag package's spellings.
func asksHelp(args []string) bool {
	return len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel).With("version", versionString())
	ratelimit.RedisClientLogs(logger)
	if cfg.DefaultSandbox() {
		logger.Warn("development without OPENAI_API_KEY: the sandbox provider is on by default; set OPENAI_API_KEY for a real model, or AGENTLINE_SANDBOX=false to keep it off")
	}
	a, err := app.New(ctx, cfg, logger, stdout)
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	return a.Run(ctx, ln)
}

// openMigrated opens the database and applies every pending migration, as
// the commands that work on the database directly need.
func openMigrated(ctx context.Context, databaseURL string) (*store.DB, error) {
	db, err := store.Open(ctx, databaseURL)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	status, err := db.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	for _, s := range status {
		fmt.Fprintln(stdout, s)
	}
	return nil
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
