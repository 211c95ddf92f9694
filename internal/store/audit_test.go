package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// asOwner is a request's context signed in as u from a client.
func asOwner(u agentline.User) context.Context {
	return agentline.WithAuditOrigin(context.Background(), agentline.AuditOrigin{
		Actor: agentline.Actor{Kind: agentline.ActorUser, ID: u.ID, Email: u.Email}, ClientIP: "192.0.2.7", RequestID: "req-1"})
}

// A change is logged in its transaction with the request's actor, client
// and request id and its field-by-field changes; a change that fails
// leaves no entry.
func TestAuditChangeInItsTransaction(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		u := mustUser(t, db, "owner@example.com")
		ctx := asOwner(u)
		p, err := db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		a, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ava", Model: "m", Voice: "v", Language: "en"})
		if err != nil {
			t.Fatal(err)
		}
		a.Name = "Ava 2"
		if _, err := db.UpdateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		list, err := db.AuditLog(ctx, agentline.AuditFilter{ProjectID: p.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 3 || list[0].Action != "agent.update" || list[1].Action != "agent.create" || list[2].Action != "project.create" {
			t.Fatalf("log = %+v", list)
		}
		e := list[0]
		if e.Actor != (agentline.Actor{Kind: agentline.ActorUser, ID: u.ID, Email: u.Email}) || e.ClientIP != "192.0.2.7" ||
			e.RequestID != "req-1" || e.Resource != (agentline.AuditResource{Kind: "agent", ID: jsonID(a.ID)}) || e.ProjectID != p.ID {
			t.Fatalf("entry = %+v", e)
		}
		if c := e.Changes["name"]; c[0] != "Ava" || c[1] != "Ava 2" || len(e.Changes) != 1 {
			t.Fatalf("changes = %v", e.Changes)
		}

		// A tool whose name the agent already uses is a conflict: nothing is
		// logged, since the entry rolls back with the change.
		tool := agentline.WebhookTool{ProjectID: p.ID, AgentID: a.ID, Name: "t", URL: "https://example.com", Method: "POST",
			Parameters: json.RawMessage(`{"type":"object"}`), TimeoutMS: 1000}
		if _, err := db.CreateTool(ctx, tool); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateTool(ctx, tool); agentline.ErrorCode(err) != agentline.EConflict {
			t.Fatalf("duplicate tool: %v", err)
		}
		if _, err := db.UpdateAgent(ctx, agentline.Agent{ProjectID: p.ID, ID: a.ID + 100, Name: "x"}); err == nil {
			t.Fatal("update of a missing agent succeeded")
		}
		after, _ := db.AuditLog(ctx, agentline.AuditFilter{ProjectID: p.ID})
		if len(after) != 4 || after[0].Action != "tool.create" {
			t.Fatalf("after failed changes, log = %+v", after)
		}
	})
}

func jsonID(id int64) string { b, _ := json.Marshal(id); return string(b) }

// Secrets never reach the log: a webhook's signing secret, a tool's
// headers, a provider key (sealed), a password hash, an invitation's
// token hash. The log says that they changed, masked.
func TestAuditMasksSecrets(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		u := mustUser(t, db, "owner@example.com")
		ctx := asOwner(u)
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
		a, _ := db.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: "Ava", Model: "m", Voice: "v", Language: "en"})
		secrets := []string{"whsec_TOPSECRETsigning", "Bearer TOPSECRETheader", "SEALEDTOPSECRETkey", "TOPSECRETpasswordhash", "TOPSECRETtokenhash"}
		e, err := db.CreateWebhook(ctx, agentline.WebhookEndpoint{ProjectID: p.ID, URL: "https://example.com/h", Events: []string{"*"}, Enabled: true, Secret: secrets[0]})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.RotateWebhookSecret(ctx, p.ID, e.ID, "whsec_TOPSECRETrotated", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		tool, err := db.CreateTool(ctx, agentline.WebhookTool{ProjectID: p.ID, AgentID: a.ID, Name: "t", URL: "https://example.com", Method: "POST",
			Parameters: json.RawMessage(`{"type":"object"}`), TimeoutMS: 1000, Headers: map[string]string{"Authorization": secrets[1]}})
		if err != nil {
			t.Fatal(err)
		}
		tool.Headers = map[string]string{"Authorization": secrets[1] + "2"}
		if _, err := db.UpdateTool(ctx, tool); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SaveProviderAccount(ctx, agentline.ProviderAccount{ProjectID: p.ID, Kind: agentline.ProviderOpenAI, SealedKey: secrets[2], KeyLast4: "abcd"}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetPassword(ctx, u.ID, secrets[3], ""); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateInvite(ctx, agentline.Invite{ProjectID: p.ID, Kind: agentline.InviteJoin, Email: "new@example.com", Role: agentline.RoleEditor,
			ExpiresAt: time.Now().Add(time.Hour)}, secrets[4], u.ID, false); err != nil {
			t.Fatal(err)
		}
		rows := db.AuditRows(context.Background(), t)
		for _, s := range append(secrets, "TOPSECRETrotated") {
			if strings.Contains(rows, s) {
				t.Errorf("the audit log holds the secret %q:\n%s", s, rows)
			}
		}
		for _, want := range []string{"webhook.create", "webhook.rotate_secret", "tool.update", "provider_account.save", "user.password_set", "invite.create", agentline.Masked} {
			if !strings.Contains(rows, want) {
				t.Errorf("the audit log has no %q:\n%s", want, rows)
			}
		}
		list, _ := db.AuditLog(ctx, agentline.AuditFilter{ProjectID: p.ID, Action: "tool.update"})
		if len(list) != 1 || list[0].Changes["headers"] != [2]any{agentline.Masked, agentline.Masked} {
			t.Fatalf("tool.update = %+v", list)
		}
	})
}

// The log pages by id, newest first, and filters by actor, action,
// resource and dates; instance-level entries are a log of their own.
func TestAuditFiltersAndPages(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		u := mustUser(t, db, "owner@example.com")
		ctx := asOwner(u)
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "Acme"}, u.ID)
		keyCtx := agentline.WithAuditOrigin(context.Background(), agentline.AuditOrigin{Actor: agentline.Actor{Kind: agentline.ActorAPIKey, ID: 9, KeyPrefix: "agl_sk_ab12"}})
		for i := 0; i < 5; i++ {
			c := ctx
			if i%2 == 1 {
				c = keyCtx
			}
			if _, err := db.CreateAgent(c, agentline.Agent{ProjectID: p.ID, Name: "A", Model: "m", Voice: "v", Language: "en"}); err != nil {
				t.Fatal(err)
			}
		}
		old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := db.AppendAudit(ctx, agentline.AuditEntry{At: old, Action: "auth.sign_in_failed", Resource: agentline.AuditResource{Kind: "user"},
			Actor: agentline.Actor{Kind: agentline.ActorUser, Email: "who@example.com"}}); err != nil {
			t.Fatal(err)
		}
		var seen []int64
		before := int64(0)
		for pages := 0; pages < 10; pages++ {
			page, err := db.AuditLog(ctx, agentline.AuditFilter{ProjectID: p.ID, Before: before, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page {
				seen = append(seen, e.ID)
			}
			if len(page) < 2 {
				break
			}
			before = page[len(page)-1].ID
		}
		if len(seen) != 6 {
			t.Fatalf("paged ids = %v, want the 6 entries of the project", seen)
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] >= seen[i-1] {
				t.Fatalf("ids not newest first: %v", seen)
			}
		}
		count := func(f agentline.AuditFilter) int {
			list, err := db.AuditLog(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			return len(list)
		}
		for name, c := range map[string]struct {
			f    agentline.AuditFilter
			want int
		}{
			"key":         {agentline.AuditFilter{ProjectID: p.ID, ActorKind: agentline.ActorAPIKey}, 2},
			"key prefix":  {agentline.AuditFilter{ProjectID: p.ID, ActorLabel: "agl_sk_ab12"}, 2},
			"email":       {agentline.AuditFilter{ProjectID: p.ID, ActorLabel: "OWNER@example.com"}, 4},
			"user id":     {agentline.AuditFilter{ProjectID: p.ID, ActorID: u.ID, ActorKind: agentline.ActorUser}, 4},
			"action":      {agentline.AuditFilter{ProjectID: p.ID, Action: "project.create"}, 1},
			"resource":    {agentline.AuditFilter{ProjectID: p.ID, ResourceKind: "project", ResourceID: jsonID(p.ID)}, 1},
			"future":      {agentline.AuditFilter{ProjectID: p.ID, From: time.Now().Add(time.Hour)}, 0},
			"past":        {agentline.AuditFilter{ProjectID: p.ID, To: time.Now().Add(-time.Hour)}, 0},
			"instance":    {agentline.AuditFilter{}, 2}, // the account made, the failed sign-in
			"instance to": {agentline.AuditFilter{To: old.Add(time.Second)}, 1},
		} {
			if got := count(c.f); got != c.want {
				t.Errorf("%s: %d entries, want %d", name, got, c.want)
			}
		}
	})
}

// The prune deletes the entries older than the cutoff, and nothing else.
func TestPruneAuditLog(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		for i, at := range []time.Time{now.AddDate(0, 0, -400), now.AddDate(0, 0, -366), now.AddDate(0, 0, -364), now} {
			if err := db.AppendAudit(ctx, agentline.AuditEntry{At: at, Action: "auth.sign_in_failed", Resource: agentline.AuditResource{Kind: "user", ID: jsonID(int64(i))}}); err != nil {
				t.Fatal(err)
			}
		}
		n, err := db.PruneAuditLog(ctx, now.AddDate(0, 0, -365))
		if err != nil || n != 2 {
			t.Fatalf("PruneAuditLog = %d, %v; want 2", n, err)
		}
		left, _ := db.AuditLog(ctx, agentline.AuditFilter{})
		if len(left) != 2 || left[0].Resource.ID != "3" || left[1].Resource.ID != "2" {
			t.Fatalf("left = %+v", left)
		}
	})
}
