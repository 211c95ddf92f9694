package tools

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/egress/egresstest"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A webhook that cannot be reached answers the caller (a public widget, the
// model) with its code and a generic sentence; the network error itself,
// which names resolvers, addresses and ports, goes to the log with the
// request id.
func TestUnreachableWebhookKeepsNetworkErrorsInTheLog(t *testing.T) {
	e := newEnv(t, storetest.Open(t, store.SQLite))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	var log bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&log, nil))
	f := New(e.db, Options{Resolver: egresstest.Resolver(t, map[string]netip.Addr{}), AllowPrivateWebhooks: true, Logger: logger})
	e.addTool(t, e.agent, agentline.WebhookTool{Name: "nodns", URL: "http://no-such-host.example/hook", TimeoutMS: 5000})
	e.addTool(t, e.agent, agentline.WebhookTool{Name: "refused", URL: "http://" + closedAddr + "/hook", TimeoutMS: 5000})

	// Through the edge, as a widget request runs it, for the request id.
	var results []agentline.ToolResult
	h := httpx.NewEdge(logger, 1024, prometheus.NewRegistry()).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, name := range []string{"nodns", "refused"} {
			res, err := f.Execute(r.Context(), e.agent, agentline.ToolCall{CallID: "c-" + name, Name: name})
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			results = append(results, res)
		}
	}))
	req := httptest.NewRequestWithContext(context.Background(), "POST", "/widget/v1/tools/execute", nil)
	req.Header.Set("X-Request-Id", "req-leak-1")
	h.ServeHTTP(httptest.NewRecorder(), req)

	if len(results) != 2 {
		t.Fatalf("results = %v", results)
	}
	for _, res := range results {
		if errorCode(t, res) != "unreachable" {
			t.Errorf("%s: output %s, want unreachable", res.CallID, res.Output)
		}
		for _, leak := range []string{"no-such-host", "lookup", "127.0.0.1", closedAddr, "refused", "dial", "tcp"} {
			if strings.Contains(res.Output, leak) {
				t.Errorf("%s: output %s carries %q", res.CallID, res.Output, leak)
			}
		}
	}
	for _, want := range []string{"no such host", "connection refused", `"request_id":"req-leak-1"`, `"outcome":"unreachable"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
}
