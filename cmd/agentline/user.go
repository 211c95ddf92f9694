package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/store"
)

var errUserUsage = errors.New(`usage:
  agentline user create --email EMAIL [--password -] [--admin]
      the password comes from standard input (--password -, or piped in), or from AGENTLINE_USER_PASSWORD;
      --password PASSWORD works too but leaves it in the shell history and the process list;
      --admin makes the account an instance administrator (the first account always is one)
  agentline user list
      every account: id, email, admin, disabled
  agentline user reset-password --email EMAIL
      prints a one-time link that sets the account's password (for operators without mail)`)

// userCommand runs `agentline user SUBCOMMAND`.
func userCommand(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errUserUsage
	}
	switch args[0] {
	case "create":
		return userCreate(ctx, args[1:], getenv, stdin, stdout)
	case "list":
		return userList(ctx, args[1:], getenv, stdout)
	case "reset-password":
		return userResetPassword(ctx, args[1:], getenv, stdout)
	}
	return errUserUsage
}

// userDB parses the flags of a user subcommand (with more added by
// extra), and opens the migrated database with an auth service on it.
func userDB(ctx context.Context, name string, args []string, getenv func(string) string, extra func(*flag.FlagSet)) (*store.DB, *auth.Service, config.Config, error) {
	fs := flag.NewFlagSet("agentline user "+name, flag.ContinueOnError)
	cfg, err := config.Register(fs, getenv)
	if err != nil {
		return nil, nil, config.Config{}, err
	}
	extra(fs)
	if err := config.Parse(fs, args); err != nil {
		return nil, nil, *cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, *cfg, err
	}
	db, err := openMigrated(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, *cfg, err
	}
	svc := auth.New(db, cfg.SessionTTL, auth.WithPasswordCost(int(cfg.PasswordCost)), auth.WithLinkTTLs(cfg.InviteTTL, cfg.ResetTTL))
	return db, svc, *cfg, nil
}

func userList(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	db, _, _, err := userDB(ctx, "list", args, getenv, func(*flag.FlagSet) {})
	if err != nil {
		return err
	}
	defer db.Close()
	users, err := db.Users(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tEMAIL\tADMIN\tDISABLED\tCREATED")
	for _, u := range users {
		fmt.Fprintf(w, "%d\t%s\t%v\t%v\t%s\n", u.ID, u.Email, u.Admin, u.Disabled, u.CreatedAt.Format(time.RFC3339))
	}
	return w.Flush()
}

func userResetPassword(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	var email *string
	db, svc, cfg, err := userDB(ctx, "reset-password", args, getenv, func(fs *flag.FlagSet) {
		email = fs.String("email", "", "email of the account")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if *email == "" {
		return errUserUsage
	}
	u, _, err := db.UserByEmail(ctx, *email)
	if err != nil {
		return err
	}
	link, err := svc.ResetLink(ctx, u, 0, false)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(cfg.PublicURL, "/")
	if base == "" {
		base = "http://localhost" + portOf(cfg.Addr)
	}
	fmt.Fprintf(stdout, "reset link for %s (works once, until %s; using it signs the account out everywhere):\n%s%s\n",
		u.Email, link.ExpiresAt.Format(time.RFC3339), base, link.URL)
	return nil
}

// portOf is ":PORT" of a listen address, or "" when it has none.
func portOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i:]
	}
	return ""
}

// userPasswordEnv names the variable user create reads the password from,
// for scripts that hold it in their environment.
const userPasswordEnv = "AGENTLINE_USER_PASSWORD"

func userCreate(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	var email, password *string
	var admin *bool
	db, svc, _, err := userDB(ctx, "create", args, getenv, func(fs *flag.FlagSet) {
		email = fs.String("email", "", "email of the new user")
		password = fs.String("password", "", "password of the new user (at least 8 characters); - reads it from standard input")
		admin = fs.Bool("admin", false, "make the account an instance administrator")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if *email == "" {
		return errUserUsage
	}
	pw, err := userPassword(*password, getenv, stdin)
	if err != nil {
		return err
	}
	u, err := svc.CreateUser(ctx, *email, pw)
	if err != nil {
		return err
	}
	if *admin && !u.Admin {
		if u, err = db.UpdateUser(ctx, u.ID, agentline.UserChange{Admin: admin}); err != nil {
			return err
		}
	}
	kind := "user"
	if u.Admin {
		kind = "instance administrator"
	}
	fmt.Fprintf(stdout, "created %s %d <%s>\n", kind, u.ID, u.Email)
	return nil
}

// userPassword picks the password: the flag's value; with --password -, the
// first line of stdin; with no flag, AGENTLINE_USER_PASSWORD, else stdin
// when it is not a terminal (stdin is nil then).
func userPassword(flagValue string, getenv func(string) string, stdin io.Reader) (string, error) {
	switch {
	case flagValue != "" && flagValue != "-":
		return flagValue, nil
	case flagValue == "" && getenv(userPasswordEnv) != "":
		return getenv(userPasswordEnv), nil
	case stdin == nil:
		if flagValue == "-" {
			return "", errors.New("--password - reads the password from standard input, which is a terminal here: pipe it in, or set " + userPasswordEnv)
		}
		return "", errUserUsage
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("no password on standard input\n%w", errUserUsage)
	}
	return line, nil
}

// stdinIfPiped is standard input, or nil when it is a terminal: a password
// typed there would echo, and waiting on it would look like a hang.
func stdinIfPiped() io.Reader {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	return os.Stdin
}
