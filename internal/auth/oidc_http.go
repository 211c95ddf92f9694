package auth

import (
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// SignedInPath is the console page that keeps a session token handed over
// by single sign-on, in the URL's fragment (never sent to a server), and
// replaces itself in the history at once.
const SignedInPath = "/#/signed-in/"

// ssoPage is the answer to a sign-in that did not work: what happened, in
// one sentence, and the way back to the sign-in page.
var ssoPage = template.Must(template.New("sso").Parse(httpx.PageHead + `<title>{{.Title}} · agentline</title></head>
<body style="font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1a1a1a">
<main>
<h1>{{.Title}}</h1>
<p role="alert">{{.Sentence}}</p>
<p><a href="/" style="color:#0b57d0">Back to the sign-in page</a></p>
</main>
</body></html>
`))

func writeSSOPage(w http.ResponseWriter, status int, title, sentence string) {
	httpx.WriteHTML(w, status, "default-src 'none'; style-src 'unsafe-inline'", ssoPage,
		struct{ Title, Sentence string }{title, sentence})
}

// unavailable is the page of a sign-in that failed on the servers' side:
// the provider did not answer, or this agentline's database did not (the
// log says which).
func (h *Handler) unavailable(w http.ResponseWriter) {
	writeSSOPage(w, http.StatusBadGateway, "Sign-in unavailable", "Signing in with "+h.sso.Name()+" does not work right now. Try again in a minute.")
}

// ssoStart sends the browser to the provider, with a short-lived HttpOnly
// cookie that binds the sign-in's state to this browser.
func (h *Handler) ssoStart(w http.ResponseWriter, r *http.Request) error {
	if h.sso == nil {
		writeSSOPage(w, http.StatusNotFound, "Single sign-on is off", "This agentline has no single sign-on: sign in with your email and password.")
		return nil
	}
	authURL, binding, err := h.sso.Start(r.Context())
	if err != nil {
		httpx.Logger(r.Context()).Error("single sign-on: start", "err", err)
		h.unavailable(w)
		return nil
	}
	http.SetCookie(w, h.flowCookie(binding, int(flowTTL.Seconds())))
	http.Redirect(w, r, authURL, http.StatusFound)
	return nil
}

// flowCookie is the browser's binding: HttpOnly, Lax (it must come back
// with the provider's top-level redirect), Secure on https, and only sent
// to the sign-in's own paths.
func (h *Handler) flowCookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: flowCookie, Value: value, Path: "/api/auth/oidc/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(h.sso.cfg.RedirectURL, "https://")}
}

// ssoCallback finishes the sign-in the provider sent back, and hands the
// session to the console; each refusal is a page that says why.
func (h *Handler) ssoCallback(w http.ResponseWriter, r *http.Request) error {
	if h.sso == nil {
		writeSSOPage(w, http.StatusNotFound, "Single sign-on is off", "This agentline has no single sign-on: sign in with your email and password.")
		return nil
	}
	log := httpx.Logger(r.Context()).With("provider", h.sso.Name(), "remote", ClientIP(r))
	http.SetCookie(w, h.flowCookie("", -1))
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		log.Warn("single sign-on refused by the provider", "error", e)
		writeSSOPage(w, http.StatusForbidden, "Sign-in refused", h.sso.Name()+" did not sign you in ("+e+"). Start again from the sign-in page.")
		return nil
	}
	var binding string
	if c, err := r.Cookie(flowCookie); err == nil {
		binding = c.Value
	}
	ctx := PublicOrigin(r)
	login, err := h.sso.Finish(ctx, q.Get("code"), q.Get("state"), binding)
	var refusal *Refusal
	switch {
	case errors.As(err, &refusal):
		log.Warn("single sign-on refused", "reason", refusal.Message, "cause", refusal.Cause)
		if err := h.svc.logSignIn(ctx, "auth.sso_sign_in_refused", agentline.User{}, nil); err != nil {
			log.Error("audit log", "err", err)
		}
		writeSSOPage(w, http.StatusForbidden, "Sign-in refused", refusal.Message)
		return nil
	case err != nil:
		log.Error("single sign-on failed", "err", err)
		h.unavailable(w)
		return nil
	}
	log.Info("single sign-on", "user_id", login.User.ID, "email", login.User.Email, "subject", login.Subject, "new_account", login.Created)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, SignedInPath+login.Token, http.StatusSeeOther)
	return nil
}
