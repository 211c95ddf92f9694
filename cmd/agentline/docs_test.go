package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/app/apptest"
)

// TestDocs runs the shell examples of README.md and docs/*.md against a
// fresh server per file, so that an example that drifts from the code fails
// here instead of in a reader's terminal. The conventions the docs follow
// are in docsparse_test.go; what the session is given is in docSession.
//
// It needs bash, curl and jq (the docs use jq to pick fields out of
// answers). Without them it is skipped, unless AGENTLINE_REQUIRE_DOCS=1
// (set by .ci/run) makes that a failure.
func TestDocs(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("AGENTLINE_REQUIRE_DOCS") == "1" {
				t.Fatalf("the docs test needs %s on PATH", tool)
			}
			t.Skipf("the docs test needs %s on PATH (AGENTLINE_REQUIRE_DOCS=1 makes this a failure)", tool)
		}
	}
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	var all docTally
	for _, path := range files {
		name := strings.TrimPrefix(path, "../../")
		t.Run(name, func(t *testing.T) { all.add(runDoc(t, path, name)) })
	}
	all.log(t, len(files))
}

// log prints the summary: what ran and every skipped block with its
// reason, in file order. (Files run one after the other: under -race the
// machine's cores are the limit, not the waiting.)
func (all *docTally) log(t *testing.T, files int) {
	t.Logf("docs: %d files, %d sh blocks run (%d commands; %d statuses, %d answers checked), %d skipped:\n%s",
		files, all.blocks, all.commands, all.statuses, all.answers, all.skippedBlocks, strings.Join(all.skipped, "\n"))
}

// docTally counts what the docs test did.
type docTally struct {
	blocks, commands, statuses, answers int
	skippedBlocks                       int
	skipped                             []string // one line per skipped block (or file), with the reason
}

func (d *docTally) add(o docTally) {
	d.blocks += o.blocks
	d.commands += o.commands
	d.statuses += o.statuses
	d.answers += o.answers
	d.skippedBlocks += o.skippedBlocks
	d.skipped = append(d.skipped, o.skipped...)
}

// runDoc runs one file's blocks against a fresh server.
func runDoc(t *testing.T, path, name string) (tally docTally) {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks, skipFile := parseDoc(string(text))
	if skipFile != "" && len(blocks) > 0 {
		tally.skipped = []string{fmt.Sprintf("  %s: all %d sh blocks skipped: %s", name, len(blocks), skipFile)}
		tally.skippedBlocks, blocks = len(blocks), nil
	}
	var cmds []docCommand
	shown := map[int]string{} // doc line of a curl -> the JSON shown after its block
	for _, b := range blocks {
		if b.Skip != "" {
			tally.skipped = append(tally.skipped, fmt.Sprintf("  %s:%d: skipped: %s", name, b.Line, b.Skip))
			tally.skippedBlocks++
			continue
		}
		c, err := splitCommands(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tally.blocks++
		cmds = append(cmds, c...)
		for i := len(c) - 1; i >= 0 && b.Shows != ""; i-- {
			if c[i].Curl {
				shown[c[i].Line] = b.Shows
				break
			}
		}
	}
	for _, s := range tally.skipped {
		t.Log(s)
	}
	if len(cmds) == 0 {
		return tally
	}
	s := newDocSession(t)
	out, runErr := s.run(t, script(cmds, s.subst))
	tally.answers = s.checkBodies(t, name, cmds) + s.checkShapes(t, name, shown)
	if runErr != nil {
		t.Fatalf("%s: %v\n--- output (last 4 KB):\n%s", name, runErr, tail(out, 4096))
	}
	tally.commands, tally.statuses = len(cmds), s.statuses()
	t.Logf("%s: ran %d blocks, %d commands; %d statuses and %d answers checked", name, tally.blocks, tally.commands, tally.statuses, tally.answers)
	return tally
}

// docSession is a fresh server and the bash session that runs a file's
// blocks against it: working directory the server's (its SQLite file
// agentline.db is there, as after `make run`), `agentline` on PATH (this
// test binary, which runs as the command when AGENTLINE_DOCS_CLI=1), and
// the environment the server was started with.
type docSession struct {
	dir, work string
	env       map[string]string
	subst     *strings.Replacer
}

// docServerEnv is how the docs' server runs: development, with the sandbox
// provider and the sandbox carrier, as `TELEPHONY_ENABLED=true
// BOT_HOST=localhost agentline serve --sandbox` on a laptop.
var docServerEnv = map[string]string{
	"AGENTLINE_SANDBOX": "true",
	"TELEPHONY_ENABLED": "true",
	"BOT_HOST":          "localhost",
}

// docSessionEnv is what the session has beyond the server's settings: the
// bcrypt cost the test server uses (apptest.Config), so that the
// agentline commands in the docs hash passwords as fast as it does.
var docSessionEnv = map[string]string{"AGENTLINE_PASSWORD_COST": "4"}

func newDocSession(t *testing.T) *docSession {
	work := t.TempDir()
	s := &docSession{dir: t.TempDir(), work: work, env: docServerEnv}
	srv := apptest.Start(t, apptest.Config(t, "sqlite:"+filepath.Join(work, "agentline.db"), docServerEnv))
	host := strings.TrimPrefix(srv.URL, "http://")
	s.subst = strings.NewReplacer("localhost:8080", host, "127.0.0.1:8080", host, "PASTE-IT-HERE", srv.AdminPassword(t))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(s.dir, "bin")
	wrapper := "#!/bin/sh\nAGENTLINE_DOCS_CLI=1 exec " + strconv.Quote(self) + " \"$@\"\n"
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "agentline"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs the script in bash and returns what it printed.
func (s *docSession) run(t *testing.T, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script, "docs", s.dir)
	cmd.Dir = s.work
	cmd.Env = []string{"PATH=" + filepath.Join(s.dir, "bin") + ":" + os.Getenv("PATH"), "HOME=" + s.dir, "LANG=C.UTF-8"}
	for _, env := range []map[string]string{s.env, docSessionEnv} {
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// statuses is how many answers' statuses the run checked.
func (s *docSession) statuses() int {
	b, _ := os.ReadFile(filepath.Join(s.dir, "statuses"))
	return strings.Count(string(b), "\n")
}

// checkBodies compares the answers the run kept with the bodies the
// comments document, and returns how many it compared.
func (s *docSession) checkBodies(t *testing.T, name string, cmds []docCommand) int {
	n := 0
	for _, c := range cmds {
		if c.Expect.Body == "" {
			continue
		}
		got, err := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("body.%d", c.Line)))
		if err != nil {
			continue // the run stopped before it; its error says why
		}
		n++
		if !bodyMatches(s.subst.Replace(c.Expect.Body), string(got)) {
			t.Errorf("%s:%d: the answer is not what the doc shows\n doc:    %s\n answer: %s", name, c.Line, c.Expect.Body, tail(string(got), 1000))
		}
	}
	return n
}

// checkShapes compares the shape of the answers the run kept with the
// ```json blocks shown after their blocks, and returns how many it
// compared.
func (s *docSession) checkShapes(t *testing.T, name string, shown map[int]string) int {
	n := 0
	for line, doc := range shown {
		got, err := os.ReadFile(filepath.Join(s.dir, fmt.Sprintf("body.%d", line)))
		if err != nil {
			continue
		}
		var d, g any
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			t.Errorf("%s:%d: the JSON shown after the block does not parse: %v", name, line, err)
			continue
		}
		if err := json.Unmarshal(got, &g); err != nil {
			t.Errorf("%s:%d: the answer is not JSON: %s", name, line, tail(string(got), 300))
			continue
		}
		n++
		if diffs := shapeDiff("answer", d, g); len(diffs) > 0 {
			sort.Strings(diffs)
			t.Errorf("%s:%d: the JSON shown after the block has another shape than the answer:\n  %s", name, line, strings.Join(diffs, "\n  "))
		}
	}
	return n
}

// script is the bash program of a file's commands: a curl that records
// each answer, and after each curl a check of its status.
func script(cmds []docCommand, subst *strings.Replacer) string {
	var b strings.Builder
	b.WriteString(scriptPrelude)
	for _, c := range cmds {
		fmt.Fprintf(&b, "__line=%d\n%s\n", c.Line, subst.Replace(c.Text))
		if c.Curl {
			want := "2xx"
			if c.Expect.Status != 0 {
				want = strconv.Itoa(c.Expect.Status)
			}
			fmt.Fprintf(&b, "__expect %d %s\n", c.Line, want)
		}
	}
	return b.String()
}

// scriptPrelude makes the session strict, and wraps curl so that each
// answer's status and body are kept ($1 is the harness's directory).
const scriptPrelude = `set -euo pipefail
__d=$1
__line=0
trap 'echo "docs-test: line $__line: the command failed (exit $?)" >&2' ERR
curl() {
  local rc=0
  command curl -D "$__d/headers" "$@" >"$__d/body" || rc=$?
  cat "$__d/body"
  return $rc
}
__expect() {
  if [[ ! -f $__d/headers ]]; then echo "docs-test: line $1: no curl answered" >&2; exit 1; fi
  local got
  got=$(awk '/^HTTP\//{s=$2} END{print s}' "$__d/headers")
  rm -f "$__d/headers"
  cp "$__d/body" "$__d/body.$1"
  echo "$1 $got" >>"$__d/statuses"
  if [[ $2 == 2xx && $got == 2?? ]] || [[ $got == "$2" ]]; then return 0; fi
  echo "docs-test: line $1: status $got, want $2: $(head -c 500 "$__d/body")" >&2
  exit 1
}
`

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
