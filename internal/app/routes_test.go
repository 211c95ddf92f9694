package app_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// routesDoc is where the whole HTTP surface is listed for readers.
const routesDoc = "../../docs/routes.md"

// docs/routes.md lists every route with its auth and handler, as the app
// registers them; AGENTLINE_UPDATE_ROUTES=1 rewrites it. Every route says
// what it demands of its caller and names its handler.
func TestRouteTableIsCurrent(t *testing.T) {
	t.Parallel()
	a, err := newApp(t, apptest.Config(t, storetest.URL(t, store.SQLite), map[string]string{
		"AGENTLINE_SANDBOX": "true", "TELEPHONY_ENABLED": "true", "BOT_HOST": "localhost",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`# Routes

Every route agentline serves, generated from the running app by
` + "`TestRouteTableIsCurrent`" + ` in internal/app (run it with
` + "`AGENTLINE_UPDATE_ROUTES=1`" + ` to rewrite this file after changing a route).
Each package declares its routes in its ` + "`Routes()`" + `; ` + "`internal/app`" + ` mounts them
all on one ServeMux behind the edge middleware (request id, body limit,
recovery, access log, metrics). The API's contract is [openapi.yaml](openapi.yaml);
the sandbox routes exist only with ` + "`AGENTLINE_SANDBOX`" + `.

| method | path | auth | handler |
|---|---|---|---|
`)
	for _, r := range a.RouteTable() {
		if r.Auth == "" || r.Name == "" {
			t.Errorf("%s %s does not say its auth (%q) or handler (%q)", r.Method, r.Pattern, r.Auth, r.Name)
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | `%s` |\n", r.Method, r.Pattern, r.Auth, r.Name)
	}
	if os.Getenv("AGENTLINE_UPDATE_ROUTES") == "1" {
		if err := os.WriteFile(routesDoc, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(routesDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("docs/routes.md is out of date; run AGENTLINE_UPDATE_ROUTES=1 go test -run TestRouteTableIsCurrent ./internal/app/")
	}
}
