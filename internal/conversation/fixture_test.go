package conversation_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// fixture is two projects, each with an agent and a widget channel.
type fixture struct {
	p1, p2 agentline.Project
	a1, a2 agentline.Agent
	c1, c2 agentline.Channel
}

func newFixture(t *testing.T, db *store.DB) fixture {
	t.Helper()
	ctx := context.Background()
	u := mustUser(t, db, "owner@example.com")
	var f fixture
	f.p1, _ = db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
	f.p2, _ = db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
	var err error
	for _, x := range []struct {
		p *agentline.Project
		a *agentline.Agent
		c *agentline.Channel
	}{{&f.p1, &f.a1, &f.c1}, {&f.p2, &f.a2, &f.c2}} {
		*x.a = mustAgent(t, db, x.p.ID, "Ada")
		ch := agentline.Channel{ProjectID: x.p.ID, AgentID: &x.a.ID, Type: agentline.ChannelVoiceWidget, Name: "site"}
		if err := ch.Validate(); err != nil {
			t.Fatal(err)
		}
		if *x.c, err = db.CreateChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func mustUser(t *testing.T, db *store.DB, email string) agentline.User {
	t.Helper()
	u, err := db.CreateUser(context.Background(), email, "hash")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustAgent(t *testing.T, db *store.DB, projectID int64, name string) agentline.Agent {
	t.Helper()
	a, err := db.CreateAgent(context.Background(), agentline.Agent{ProjectID: projectID, Name: name, Model: "gpt-realtime", Provider: agentline.ProviderOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// subscribe connects a pretend job queue and a webhook endpoint for every
// event of the project.
func subscribe(t *testing.T, db *store.DB, projectID int64) agentline.WebhookEndpoint {
	t.Helper()
	db.SetOutbox(store.OutboxOptions{Enqueue: func(context.Context, *sql.Tx, []agentline.Job) error { return nil }})
	ep, err := db.CreateWebhook(context.Background(), agentline.WebhookEndpoint{ProjectID: projectID, URL: "https://hooks.example.com/x",
		Events: []string{"*"}, Enabled: true, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// deliveries lists the deliveries to the endpoint of the events whose
// subject is subject (any, when empty), oldest first.
func deliveries(t *testing.T, db *store.DB, projectID, endpointID int64, subject string) []agentline.WebhookDelivery {
	t.Helper()
	list, err := db.WebhookDeliveries(context.Background(), projectID, endpointID, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []agentline.WebhookDelivery
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Subject == subject || subject == "" {
			out = append(out, list[i])
		}
	}
	return out
}

// eventTypes lists the types of deliveries' events, in their order.
func eventTypes(list []agentline.WebhookDelivery) []string {
	out := []string{}
	for _, d := range list {
		out = append(out, d.EventType)
	}
	return out
}
