package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/auth/oidctest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// balancer is a load balancer on the instances' public URL that sends
// every request to the instance the test chose last: no sticky sessions.
type balancer struct {
	URL    string
	mu     sync.Mutex
	target *apptest.Server
	served map[string][]string // path -> which instance answered, in order
}

func startBalancer(t *testing.T, ln net.Listener) *balancer {
	t.Helper()
	b := &balancer{URL: "http://" + ln.Addr().String(), served: map[string][]string{}}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		b.mu.Lock()
		to := b.target
		b.served[r.In.URL.Path] = append(b.served[r.In.URL.Path], to.URL)
		b.mu.Unlock()
		u, _ := url.Parse(to.URL)
		r.SetURL(u)
		r.Out.Host = r.In.Host
	}}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return b
}

// to sends the next requests to s.
func (b *balancer) to(s *apptest.Server) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.target = s
}

// last is the instance that answered path last.
func (b *balancer) last(path string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.served[path]
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// ssoBrowser is a browser's side of a sign-in over HTTP: a cookie jar,
// and redirects followed by the test, one at a time.
type ssoBrowser struct {
	t *testing.T
	c *http.Client
}

func newSSOBrowser(t *testing.T) ssoBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return ssoBrowser{t: t, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get answers the status, the Location and the body of one request.
func (br ssoBrowser) do(req *http.Request) (int, string, string) {
	br.t.Helper()
	res, err := br.c.Do(req)
	if err != nil {
		br.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(body)
}

func (br ssoBrowser) get(u string) (int, string, string) {
	br.t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		br.t.Fatal(err)
	}
	return br.do(req)
}

// toProvider starts a sign-in at the balancer and approves it at the
// provider as subject: it returns the provider's redirect back, with its
// code and state, not followed yet.
func (br ssoBrowser) toProvider(lb *balancer, op *oidctest.Provider, subject string) string {
	br.t.Helper()
	status, authURL, _ := br.get(lb.URL + auth.OIDCStartPath)
	if status != http.StatusFound || !strings.HasPrefix(authURL, op.URL+"/authorize?") {
		br.t.Fatalf("start: %d %q", status, authURL)
	}
	if status, _, _ := br.get(authURL); status != http.StatusOK {
		br.t.Fatalf("the provider's page: %d", status)
	}
	u, _ := url.Parse(authURL)
	form := u.Query()
	form.Set("subject", subject)
	req, _ := http.NewRequest("POST", op.URL+"/authorize", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, back, _ := br.do(req)
	if status != http.StatusFound || !strings.HasPrefix(back, lb.URL+auth.OIDCCallbackPath+"?") {
		br.t.Fatalf("approve: %d %q", status, back)
	}
	return back
}

// A sign-in started on one instance finishes on another behind a balancer
// without sticky sessions: the sign-in under way is in the shared
// database. Its callback works once, and not after it expired, each
// refusal a page that says which.
func TestSSOAcrossInstances(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) { testSSOAcrossInstances(t, d) })
	}
}

func testSSOAcrossInstances(t *testing.T, d store.Dialect) {
	alice := oidctest.User{Subject: "sub-alice", Email: "alice@example.com", EmailVerified: true}
	op := oidctest.Start(t, "agentline-test", "test-secret", alice)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := startBalancer(t, ln)
	key := make([]byte, agentline.EncryptionKeySize)
	rand.Read(key)
	vars := map[string]string{"AGENTLINE_PUBLIC_URL": lb.URL, "AGENTLINE_OIDC_ISSUER": op.URL,
		"AGENTLINE_OIDC_CLIENT_ID": op.ClientID, "AGENTLINE_OIDC_CLIENT_SECRET": op.ClientSecret,
		"AGENTLINE_ENCRYPTION_KEY": base64.StdEncoding.EncodeToString(key)}
	dbURL := storetest.URL(t, d)
	a := apptest.Start(t, apptest.Config(t, dbURL, vars))
	b := apptest.Start(t, apptest.Config(t, dbURL, vars))

	// Started on A, finished on B.
	br := newSSOBrowser(t)
	lb.to(a)
	back := br.toProvider(lb, op, alice.Subject)
	if got := lb.last(auth.OIDCStartPath); got != a.URL {
		t.Fatalf("the start reached %s, not A", got)
	}
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(lb.URL + auth.OIDCStartPath)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cs := res.Cookies(); len(cs) != 1 || cs[0].Name != "agentline_oidc" || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteLaxMode ||
		cs[0].Secure || cs[0].Path != "/api/auth/oidc/" || cs[0].MaxAge != 600 {
		t.Errorf("the binding cookie on http: %+v", cs)
	}
	lb.to(b)
	status, to, body := br.get(back)
	if got := lb.last(auth.OIDCCallbackPath); got != b.URL {
		t.Fatalf("the callback reached %s, not B", got)
	}
	if status != http.StatusSeeOther || !strings.HasPrefix(to, auth.SignedInPath) {
		t.Fatalf("callback on B: %d %q %s", status, to, body)
	}
	var me struct{ User agentline.User }
	a.Must(t, 200, "GET", "/api/me", strings.TrimPrefix(to, auth.SignedInPath), nil, &me)
	if me.User.Email != alice.Email {
		t.Fatalf("signed in as %+v", me.User)
	}

	// The same callback again, on either instance: used up.
	for _, s := range []*apptest.Server{b, a} {
		lb.to(s)
		status, _, body = br.get(back)
		if status != http.StatusForbidden || !strings.Contains(body, "has been used already") {
			t.Errorf("replayed on %s: %d %s", s.URL, status, body)
		}
	}

	// Another browser with the link of this one's sign-in: refused, and
	// the sign-in is used up with it.
	lb.to(a)
	back = br.toProvider(lb, op, alice.Subject)
	lb.to(b)
	if status, _, body = newSSOBrowser(t).get(back); status != http.StatusForbidden || !strings.Contains(body, "started in another browser") {
		t.Errorf("another browser: %d %s", status, body)
	}

	// A sign-in left at the provider past its time: expired.
	lb.to(a)
	back = br.toProvider(lb, op, alice.Subject)
	if err := a.App.Store.ExecAdmin(context.Background(), `UPDATE oidc_sign_ins SET expires_at = created_at`); err != nil {
		t.Fatal(err)
	}
	lb.to(b)
	status, _, body = br.get(back)
	if status != http.StatusForbidden || !strings.Contains(body, "This sign-in expired: it must be finished within 10 minutes") ||
		!strings.Contains(body, `href="/"`) {
		t.Errorf("expired: %d %s", status, body)
	}
}
