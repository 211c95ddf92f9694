package webhooks_test

import (
	"context"
	"net"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/egress"
	"github.com/agentline/agentline/internal/egress/egresstest"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/webhooks"
)

// Every range of the address policy is refused when the running app
// delivers an event: an endpoint stored at each address (as one saved
// before the policy would be; the API refuses to save it) gets its test
// event's attempt recorded as blocked, and nothing connects. The app's
// deliverer sends with the tool facility's guarded client.
func TestDeliveriesRefuseEveryRange(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	s := apptest.StartFresh(t, store.SQLite, nil)
	_, tok := s.NewUser(t, "owner@example.com")
	var p struct{ ID int64 }
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Acme"}, &p)

	// send stores an endpoint at url and sends it a test event; firstError
	// waits for the event's first attempt and returns its error.
	type sent struct{ endpoint, delivery int64 }
	send := func(url string) sent {
		t.Helper()
		secret, err := webhooks.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.App.Store.CreateWebhook(context.Background(), agentline.WebhookEndpoint{
			ProjectID: p.ID, URL: url, Events: []string{"*"}, Enabled: true, Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		var d struct{ ID int64 }
		s.Must(t, 202, "POST", "/api/webhooks/"+itoa(e.ID)+"/test", tok, nil, &d)
		return sent{e.ID, d.ID}
	}
	firstError := func(x sent) string {
		t.Helper()
		var got struct {
			Attempts []struct{ Error string }
		}
		waitFor(t, "the first attempt", func() bool {
			s.Must(t, 200, "GET", "/api/webhooks/"+itoa(x.endpoint)+"/deliveries/"+itoa(x.delivery), tok, nil, &got)
			return len(got.Attempts) > 0
		})
		return got.Attempts[0].Error
	}
	// The client is guarded: loopback is refused before anything else is
	// tried, or the table's addresses would be dialed for real.
	if got := firstError(send(srv.URL + "/hook")); !strings.HasPrefix(got, "blocked: 127.0.0.1 is a loopback address") {
		t.Fatalf("loopback attempt: %q", got)
	}
	cases := egresstest.Refused()
	for _, c := range cases {
		if egress.Check(netip.MustParseAddr(c.Addr)) == nil {
			t.Fatalf("the policy allows %s (%s)", c.Addr, c.Name)
		}
	}
	all := make([]sent, len(cases))
	for i, c := range cases {
		all[i] = send("https://" + net.JoinHostPort(c.Addr, port) + "/hook")
	}
	for i, c := range cases {
		if got := firstError(all[i]); !strings.HasPrefix(got, "blocked: ") {
			t.Errorf("%s (%s): attempt error %q", c.Name, c.Addr, got)
		}
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}
