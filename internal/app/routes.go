package app

// The HTTP surface: every package's routes are mounted here, on one
// ServeMux behind the edge middleware. docs/routes.md lists them all with
// their auth and handler (TestRouteTableIsCurrent keeps it current).

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/config"
	"github.com/agentline/agentline/internal/httpx"
)

// mount lists the routes of the handlers build made, in the order the
// features were added. It builds nothing and cannot fail.
func (a *App) mount() []httpx.Route {
	return slices.Concat(
		a.ownRoutes(),
		a.accounts.Routes(), a.accounts.AdminRoutes(),
		a.api.Routes(),
		a.toolAdmin.Routes(),
		a.widget.Routes(), a.widget.TestSessionRoutes(),
		a.assets.Routes(),
		a.sandboxRoutes(),
		a.phone.Routes(),
		a.form.Routes(),
		a.webhooks.Routes(),
		a.conversations.Routes(),
		a.campaigns.Routes(),
		a.providers.Routes(),
		a.tests.Routes(),
		a.mcp.Routes(),
		a.audit.Routes(),
		a.assets.ConsoleRoutes(),
	)
}

// sandboxRoutes are, in sandbox mode only, the sandbox provider's routes
// and the one that tells a simulator how the sandbox's carrier signs.
func (a *App) sandboxRoutes() []httpx.Route {
	if a.Sandbox == nil {
		return nil
	}
	routes := append(a.Sandbox.Routes(config.SandboxPath), a.Sandbox.GeminiRoutes(config.SandboxGeminiPath)...)
	return append(routes, a.sandboxPhoneRoutes()...)
}

// serveMux mounts a.routes on one ServeMux, with 405 for a known path asked
// with another method and 404 for the rest, behind the edge middleware.
func (a *App) serveMux() http.Handler {
	mux := http.NewServeMux()
	for _, r := range a.routes {
		mux.Handle(r.Method+" "+r.Pattern, r.Handler)
	}
	mux.Handle("/", httpx.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if allow := allowedMethods(mux, r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			return agentline.Errorf(agentline.EMethodNotAllowed, "%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, strings.Join(allow, ", "))
		}
		return agentline.Errorf(agentline.ENotFound, "no route for %s %s", r.Method, r.URL.Path)
	}))
	a.mux = mux
	edge := httpx.NewEdge(a.logger, a.Config.MaxBodyBytes, a.registry)
	edge.TrustedProxies, edge.BodyReadTimeout = a.Config.TrustedProxies(), a.Config.BodyReadTimeout
	edge.TracerProvider = a.tracing
	return edge.Wrap(mux)
}

// allowedMethods lists the methods that have a route for r's path. The mux's
// catch-all "/" takes every request no route matches, also those for a known
// path with another method, which deserve 405 and an Allow header, not 404.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if m == r.Method {
			continue
		}
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	return allow
}

func (a *App) ownRoutes() []httpx.Route {
	return []httpx.Route{
		{Method: "GET", Pattern: "/healthz", Auth: httpx.Public, Name: httpx.NameOf(healthy), Handler: httpx.HandlerFunc(healthy)},
		{Method: "GET", Pattern: "/readyz", Auth: httpx.Public, Name: httpx.NameOf(a.ready), Handler: httpx.HandlerFunc(a.ready)},
		{Method: "GET", Pattern: "/api/openapi.yaml", Auth: httpx.Public, Name: httpx.NameOf(openAPI), Handler: http.HandlerFunc(openAPI)},
	}
}

// healthy answers as long as the process serves HTTP at all.
func healthy(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// openAPI serves docs/openapi.yaml, the API's contract.
func openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(agentline.OpenAPI())
}

// ready answers 503 as soon as the instance drains, so that a load balancer
// stops sending it work, and while the database does not answer.
func (a *App) ready(w http.ResponseWriter, r *http.Request) error {
	if a.draining.Load() {
		return agentline.Errorf(agentline.EUnavailable, "shutting down: draining live calls")
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := a.Store.Ping(ctx); err != nil {
		return &agentline.Error{Code: agentline.EUnavailable, Message: "database is not reachable", Err: err}
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

// Handler is the whole HTTP surface, middleware included.
func (a *App) Handler() http.Handler { return a.handler }

// RouteTable lists every registered route, sorted by path and method.
func (a *App) RouteTable() []httpx.Route {
	out := slices.Clone(a.routes)
	slices.SortFunc(out, func(x, y httpx.Route) int {
		return cmp.Or(cmp.Compare(x.Pattern, y.Pattern), cmp.Compare(x.Method, y.Method))
	})
	return out
}

// Routes lists every registered route, sorted, as "METHOD PATTERN".
func (a *App) Routes() []string {
	out := make([]string, len(a.routes))
	for i, r := range a.routes {
		out[i] = r.Method + " " + r.Pattern
	}
	sort.Strings(out)
	return out
}
