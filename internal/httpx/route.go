package httpx

import (
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"strings"
)

// Route is one method and path pattern served by a package. Auth and Name
// are for people: docs/routes.md lists every route with them, so the whole
// HTTP surface can be read in one place.
type Route struct {
	Method  string
	Pattern string // net/http ServeMux pattern path, e.g. /api/agents/{agent_id}
	Auth    Auth
	Name    string // the handler's name, as NameOf gives it
	Handler http.Handler
}

// Auth says what a route demands of its caller before the handler runs.
type Auth string

// The kinds of callers agentline serves.
const (
	// Public routes serve anyone (health, assets, the form page); some
	// limit by client IP.
	Public Auth = "public"
	// Session routes need a console session token (Authorization: Bearer);
	// the handler checks the caller's role in the project the path names.
	Session Auth = "session token"
	// WidgetKey routes need a channel's public key (X-API-Key or ?key=),
	// an allowed Origin, and room in the key's rate limits.
	WidgetKey Auth = "widget key + origin + rate limit"
	// Preflight routes answer CORS preflights for the widget API.
	Preflight Auth = "CORS preflight"
	// Carrier routes are called by the carrier and carry its signature.
	Carrier Auth = "carrier signature"
	// StreamToken routes are the carrier's media streams, admitted by the
	// signed one-time token agentline put in the TwiML.
	StreamToken Auth = "carrier signature + stream token"
	// ProviderKey routes belong to the sandbox provider, which checks a
	// provider API key or client secret as the real provider would.
	ProviderKey Auth = "provider key (sandbox)"
	// APIKey routes take a project's API key alone (Authorization: Bearer
	// agl_sk_...): the MCP server, whose every tool acts in the key's
	// project with its role; a session token is refused.
	APIKey Auth = "API key"
)

// PublicRoute is a Public route served by fn: the one way packages
// declare the routes that anyone may call (sign-in, reading an
// invitation), as auth.Service.Route is for session routes.
func PublicRoute(method, pattern string, fn HandlerFunc) Route {
	return Route{Method: method, Pattern: pattern, Auth: Public, Name: NameOf(fn), Handler: fn}
}

// NameOf names a handler function or value for the route table:
// "widget.(*Handler).createSession" for a method value.
func NameOf(h any) string {
	v := reflect.ValueOf(h)
	if v.Kind() != reflect.Func {
		return fmt.Sprintf("%T", h)
	}
	name := runtime.FuncForPC(v.Pointer()).Name()
	name = strings.TrimSuffix(name, "-fm")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return name
}
