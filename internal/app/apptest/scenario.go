package apptest

import (
	"fmt"
	"strings"
	"testing"
)

// Fixture names the actors and objects scenarios refer to: tokens by actor
// name ("owner", "viewer", ...) and ids by path parameter name
// ("project_id", "agent_id", ...).
type Fixture struct {
	Tokens map[string]string
	IDs    map[string]int64
}

// Path fills each {name} of pattern with IDs[name]; a name without an id
// fails the test.
func (f Fixture) Path(t testing.TB, pattern string) string {
	t.Helper()
	var b strings.Builder
	for {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		j := strings.IndexByte(pattern[i:], '}')
		if j < 0 {
			t.Fatalf("unbalanced braces in %q", pattern)
		}
		name := pattern[i+1 : i+j]
		id, ok := f.IDs[name]
		if !ok {
			t.Fatalf("no id for {%s} in %q", name, pattern)
		}
		b.WriteString(pattern[:i])
		fmt.Fprint(&b, id)
		pattern = pattern[i+j+1:]
	}
}

// Scenario is one API request and what must come back, in the manner of
// pocketbase's tests.ApiScenario: method, URL, who asks, the expected status
// and parts of the body.
type Scenario struct {
	Method string
	URL    string // a path with {param} placeholders, filled from the fixture
	As     string // actor whose token is sent; "" sends none
	Body   any    // see Server.Request
	Status int
	// Code is the expected error code of an error answer ("" to skip).
	Code        string
	Contains    []string // substrings the body must hold
	NotContains []string // substrings the body must not hold
}

// Name is how the scenario shows in test output.
func (sc Scenario) Name() string {
	as := sc.As
	if as == "" {
		as = "anonymous"
	}
	return fmt.Sprintf("%s %s as %s", sc.Method, sc.URL, as)
}

// Test runs the scenario against s as a subtest.
func (sc Scenario) Test(t *testing.T, s *Server, f Fixture) {
	t.Helper()
	t.Run(sc.Name(), func(t *testing.T) {
		token := ""
		if sc.As != "" {
			var ok bool
			if token, ok = f.Tokens[sc.As]; !ok {
				t.Fatalf("no token for actor %q", sc.As)
			}
		}
		r := s.Do(t, sc.Method, f.Path(t, sc.URL), token, sc.Body)
		if r.Status != sc.Status {
			t.Fatalf("status = %s, want %d", r, sc.Status)
		}
		if sc.Code != "" && r.ErrorCode() != sc.Code {
			t.Errorf("error code = %q, want %q (%s)", r.ErrorCode(), sc.Code, r)
		}
		for _, c := range sc.Contains {
			if !strings.Contains(string(r.Body), c) {
				t.Errorf("body lacks %q: %s", c, r)
			}
		}
		for _, c := range sc.NotContains {
			if strings.Contains(string(r.Body), c) {
				t.Errorf("body holds %q: %s", c, r)
			}
		}
	})
}
