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

	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/config"
)

var errUserUsage = errors.New("usage: agentline user create --email EMAIL [--password -]: the password comes from standard input " +
	"(--password -, or piped in), or from AGENTLINE_USER_PASSWORD; --password PASSWORD works too but leaves it in the shell history and the process list")

// userPasswordEnv names the variable user create reads the password from,
// for scripts that hold it in their environment.
const userPasswordEnv = "AGENTLINE_USER_PASSWORD"

func userCreate(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("agentline user create", flag.ContinueOnError)
	cfg, err := config.Register(fs, getenv)
	if err != nil {
		return err
	}
	email := fs.String("email", "", "email of the new user")
	password := fs.String("password", "", "password of the new user (at least 8 characters); - reads it from standard input")
	if err := config.Parse(fs, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if *email == "" {
		return errUserUsage
	}
	pw, err := userPassword(*password, getenv, stdin)
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	u, err := auth.New(db, cfg.SessionTTL, auth.WithPasswordCost(int(cfg.PasswordCost))).CreateUser(ctx, *email, pw)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created user %d <%s>\n", u.ID, u.Email)
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
