package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

const testUsage = "usage: AGENTLINE_TOKEN=... agentline test --server URL --agent ID [--version N] [--scenario NAME]... [--timeout 15m]"

// stringList is a flag that may be given many times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// errTestsFailed is the outcome of a run in which a scenario failed or
// could not be played: the command exits non-zero, so CI stops there.
var errTestsFailed = errors.New("the test run did not pass")

// testCommand starts a test run of an agent on a running server, prints
// each scenario's outcome as it lands, and fails unless every scenario
// passed. The token (a session token, or an API key) comes from
// AGENTLINE_TOKEN and is sent as a Bearer token.
func testCommand(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("agentline test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", "http://127.0.0.1:8080", "base URL of the running agentline")
	agent := fs.Int64("agent", 0, "id of the agent to test")
	version := fs.Int("version", 0, "the agent version to test (default: its current settings)")
	timeout := fs.Duration("timeout", 15*time.Minute, "how long to wait for the run")
	poll := fs.Duration("poll", time.Second, "how often to ask for the run's progress")
	var names stringList
	fs.Var(&names, "scenario", "a scenario to play, by name (repeat; default: every scenario of the agent)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w\n%s", err, testUsage)
	}
	token := getenv("AGENTLINE_TOKEN")
	switch {
	case *agent <= 0:
		return errors.New("--agent is required\n" + testUsage)
	case token == "":
		return errors.New("AGENTLINE_TOKEN is not set: a session token or an API key of a member who may create in the agent's project\n" + testUsage)
	}
	c := apiClient{base: strings.TrimSuffix(*server, "/"), token: token, hc: &http.Client{Timeout: 30 * time.Second}}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	body := map[string]any{}
	if *version > 0 {
		body["version"] = *version
	}
	if len(names) > 0 {
		ids, err := c.scenarioIDs(ctx, *agent, names)
		if err != nil {
			return err
		}
		body["scenario_ids"] = ids
	}
	var run agentline.TestRun
	if err := c.do(ctx, "POST", fmt.Sprintf("/api/agents/%d/test-runs", *agent), body, &run); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "test run %d: %d scenarios\n", run.ID, len(run.Results))
	return follow(ctx, c, run.ID, *poll, stdout)
}

// follow polls the run until it completes, printing each result once.
func follow(ctx context.Context, c apiClient, runID int64, poll time.Duration, stdout io.Writer) error {
	printed := map[int64]bool{}
	for {
		var run agentline.TestRun
		if err := c.do(ctx, "GET", fmt.Sprintf("/api/test-runs/%d", runID), nil, &run); err != nil {
			return err
		}
		for _, r := range run.Results {
			if r.Status == agentline.TestResultPending || printed[r.ID] {
				continue
			}
			printed[r.ID] = true
			label := map[string]string{agentline.TestResultPassed: "PASS", agentline.TestResultFailed: "FAIL"}[r.Status]
			if label == "" {
				label = "ERROR"
			}
			line := fmt.Sprintf("%-5s %s (%d turns, %d tool calls)", label, r.ScenarioName, r.Turns, len(r.ToolCalls))
			if r.Status != agentline.TestResultPassed {
				line += ": " + r.Reason
			}
			fmt.Fprintln(stdout, line)
		}
		if run.Status == agentline.TestRunCompleted {
			fmt.Fprintf(stdout, "%d passed, %d failed, %d errors\n", run.Passed, run.Failed, run.Errors)
			if run.Failed+run.Errors > 0 {
				return errTestsFailed
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("test run %d did not finish in time: %w", runID, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// apiClient calls the management API with a Bearer token.
type apiClient struct {
	base, token string
	hc          *http.Client
}

// do sends body (nil: none) and decodes a 2xx answer into out; any other
// answer is an error with the server's message.
func (c apiClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(data, &e)
		return fmt.Errorf("%s %s: %s %s: %s", method, path, resp.Status, e.Error.Code, e.Error.Message)
	}
	return json.Unmarshal(data, out)
}

// scenarioIDs looks the named scenarios of the agent up.
func (c apiClient) scenarioIDs(ctx context.Context, agentID int64, names []string) ([]int64, error) {
	var list []agentline.TestScenario
	if err := c.do(ctx, "GET", fmt.Sprintf("/api/agents/%d/scenarios", agentID), nil, &list); err != nil {
		return nil, err
	}
	byName := map[string]int64{}
	for _, s := range list {
		byName[s.Name] = s.ID
	}
	ids := make([]int64, 0, len(names))
	for _, n := range names {
		id, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("the agent has no scenario named %q", n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
