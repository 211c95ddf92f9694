// Command agentline runs the agentline server and its tools.
//
//	agentline [serve] [flags]                 run the server (the default)
//	agentline migrate [flags]                 apply database migrations and list them
//	agentline user create --email --password  create a user
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
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/ratelimit"
	"github.com/agentline/agentline/internal/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentline:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stdout, stderr)
	case "migrate":
		return migrate(ctx, args, getenv, stdout)
	case "user":
		if len(args) == 0 || args[0] != "create" {
			return errors.New("usage: agentline user create --email EMAIL --password PASSWORD")
		}
		return userCreate(ctx, args[1:], getenv, stdout)
	case "call":
		return call(ctx, args, getenv, stdout)
	case "version":
		fmt.Fprintln(stdout, "agentline", versionString())
		return nil
	case "help":
		fmt.Fprint(stdout, "usage: agentline [serve|migrate|user create|call|version] [flags]\nflags:\n"+config.Usage())
		return nil
	}
	return fmt.Errorf("unknown command %q: use serve, migrate, user create, call or version", cmd)
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

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	status, err := db.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	for _, s := range status {
		fmt.Fprintln(stdout, s)
	}
	return nil
}

func userCreate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("agentline user create", flag.ContinueOnError)
	cfg, err := config.Register(fs, getenv)
	if err != nil {
		return err
	}
	email := fs.String("email", "", "email of the new user")
	password := fs.String("password", "", "password of the new user (at least 8 characters)")
	if err := config.Parse(fs, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if *email == "" || *password == "" {
		return errors.New("usage: agentline user create --email EMAIL --password PASSWORD")
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	u, err := auth.New(db, cfg.SessionTTL, auth.WithPasswordCost(int(cfg.PasswordCost))).CreateUser(ctx, *email, *password)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created user %d <%s>\n", u.ID, u.Email)
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
