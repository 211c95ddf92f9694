// Package oidctest is an OpenID provider for tests, on loopback: discovery,
// a JWKS with keys that rotate, an authorization page that signs in one of
// its users by a button, the authorization code flow with PKCE (S256) and
// single-use codes, and RS256 ID tokens. It can be told to misbehave the
// ways a sign-in must survive: a token signed by a key not in its JWKS, a
// wrong audience, an unverified email.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// User is a person the provider can sign in.
type User struct {
	Subject, Email, Name string
	EmailVerified        bool
}

// Tamper makes the next ID tokens wrong in one way.
type Tamper struct {
	WrongKey bool   // signed by a key the JWKS does not hold
	Audience string // aud other than the client's
}

// Provider is a running OpenID provider.
type Provider struct {
	URL                    string // the issuer
	ClientID, ClientSecret string

	mu     sync.Mutex
	users  map[string]User // by subject
	keys   []*rsa.PrivateKey
	kids   []string
	codes  map[string]grant
	tamper Tamper
	// LastRedirect is the last redirect back to the client, code included.
	lastRedirect string
}

type grant struct {
	user                           User
	clientID, redirect, nonce, pkc string
	used                           bool
}

// Start runs a provider with one client and the users; it stops when the
// test ends.
func Start(t testing.TB, clientID, clientSecret string, users ...User) *Provider {
	t.Helper()
	p := &Provider{ClientID: clientID, ClientSecret: clientSecret, users: map[string]User{}, codes: map[string]grant{}}
	for _, u := range users {
		p.users[u.Subject] = u
	}
	p.Rotate(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /authorize", p.approve)
	mux.HandleFunc("POST /token", p.token)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Rotate adds a new signing key, which signs from now on; the JWKS keeps
// publishing the older ones.
func (p *Provider) Rotate(t testing.TB) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, k)
	p.kids = append(p.kids, "key-"+string(rune('a'+len(p.kids))))
}

// SetUser adds or changes a user (a changed email, a verification).
func (p *Provider) SetUser(u User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[u.Subject] = u
}

// SetTamper makes the next ID tokens wrong as t says; Tamper{} ends it.
func (p *Provider) SetTamper(t Tamper) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = t
}

// LastRedirect is the provider's last redirect back to the client, with
// its code and state: a test replays it.
func (p *Provider) LastRedirect() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastRedirect
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{
		"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
		"jwks_uri": p.URL + "/jwks", "response_types_supported": []string{"code"},
		"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported": []string{"S256"}, "scopes_supported": []string{"openid", "email", "profile"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var set jose.JSONWebKeySet
	for i, k := range p.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: p.kids[i], Algorithm: "RS256", Use: "sig"})
	}
	writeJSON(w, 200, set)
}

var signInPage = template.Must(template.New("op").Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Test identity provider</title></head><body style="font-family:sans-serif;margin:3rem">
<main><h1>Test identity provider</h1><p>Sign in to {{.Client}} as:</p>
<form method="post" action="/authorize">{{range $k, $v := .Query}}<input type="hidden" name="{{$k}}" value="{{index $v 0}}">{{end}}
{{range .Users}}<p><button name="subject" value="{{.Subject}}">{{.Email}}</button></p>{{end}}
</form></main></body></html>`))

// authorize shows the sign-in page, after checking the request as a
// provider does: the client, its redirect URI, PKCE S256.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != p.ClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("redirect_uri") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	var users []User
	for _, u := range p.users {
		users = append(users, u)
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	signInPage.Execute(w, map[string]any{"Client": p.ClientID, "Query": q, "Users": users})
}

func (p *Provider) approve(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	p.mu.Lock()
	defer p.mu.Unlock()
	u, ok := p.users[r.PostForm.Get("subject")]
	if !ok {
		http.Error(w, "no such user", http.StatusBadRequest)
		return
	}
	code := random()
	p.codes[code] = grant{user: u, clientID: r.PostForm.Get("client_id"), redirect: r.PostForm.Get("redirect_uri"),
		nonce: r.PostForm.Get("nonce"), pkc: r.PostForm.Get("code_challenge")}
	to := r.PostForm.Get("redirect_uri") + "?" + url.Values{"code": {code}, "state": {r.PostForm.Get("state")}}.Encode()
	p.lastRedirect = to
	http.Redirect(w, r, to, http.StatusFound)
}

func random() string {
	var b [24]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// token exchanges a code once, for the client that got it, with the PKCE
// verifier of its challenge.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != p.ClientID || secret != p.ClientSecret {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.codes[r.PostForm.Get("code")]
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case !ok || g.used || g.clientID != id || g.redirect != r.PostForm.Get("redirect_uri"):
		writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "unknown or used code"})
		return
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.pkc:
		writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
		return
	}
	g.used = true
	p.codes[r.PostForm.Get("code")] = g
	idToken, err := p.sign(g)
	if err != nil {
		writeJSON(w, 500, map[string]string{"error": "server_error"})
		return
	}
	writeJSON(w, 200, map[string]any{"access_token": random(), "token_type": "Bearer", "expires_in": 3600, "id_token": idToken})
}

// sign makes the grant's ID token with the newest key; p.mu is held.
func (p *Provider) sign(g grant) (string, error) {
	key, kid := p.keys[len(p.keys)-1], p.kids[len(p.kids)-1]
	if p.tamper.WrongKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return "", err
		}
		key = k // the kid stays: a forged token claiming a real key
	}
	aud := g.clientID
	if p.tamper.Audience != "" {
		aud = p.tamper.Audience
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return "", err
	}
	now := time.Now()
	return jwt.Signed(signer).Claims(jwt.Claims{Issuer: p.URL, Subject: g.user.Subject, Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute))}).
		Claims(map[string]any{"nonce": g.nonce, "email": g.user.Email, "email_verified": g.user.EmailVerified, "name": g.user.Name}).
		Serialize()
}
