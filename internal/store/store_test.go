package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

func code(err error) string { return agentline.ErrorCode(err) }

func mustUser(t *testing.T, db *store.DB, email string) agentline.User {
	t.Helper()
	u, err := db.CreateUser(context.Background(), email, "hash")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestUsers(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "  Alice@Example.COM ")
		if u.Email != "alice@example.com" || u.ID == 0 {
			t.Fatalf("user = %+v", u)
		}
		if _, err := db.CreateUser(ctx, "ALICE@example.com", "x"); code(err) != agentline.EConflict {
			t.Fatalf("duplicate email: %v", err)
		}
		got, hash, err := db.UserByEmail(ctx, "alice@EXAMPLE.com")
		if err != nil || got.ID != u.ID || hash != "hash" {
			t.Fatalf("UserByEmail = %+v %q %v", got, hash, err)
		}
		if !got.CreatedAt.Equal(u.CreatedAt) || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("created_at round trip: %v vs %v", got.CreatedAt, u.CreatedAt)
		}
		if _, _, err := db.UserByEmail(ctx, "bob@example.com"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("missing user: %v", err)
		}
		if n, err := db.CountUsers(ctx); err != nil || n != 1 {
			t.Fatalf("CountUsers = %d, %v", n, err)
		}
	})
}

func TestAuthSessions(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		if err := db.CreateAuthSession(ctx, u.ID, "live", time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateAuthSession(ctx, u.ID, "old", time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if got, err := db.UserByTokenHash(ctx, "live"); err != nil || got.ID != u.ID {
			t.Fatalf("live token: %+v %v", got, err)
		}
		if _, err := db.UserByTokenHash(ctx, "old"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("expired token: %v", err)
		}
		if n, err := db.DeleteExpiredAuthSessions(ctx); err != nil || n != 1 {
			t.Fatalf("DeleteExpired = %d %v", n, err)
		}
		if err := db.DeleteAuthSession(ctx, "live"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UserByTokenHash(ctx, "live"); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("deleted token: %v", err)
		}
	})
}

func TestProjectsAndMembers(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		alice, bob := mustUser(t, db, "alice@example.com"), mustUser(t, db, "bob@example.com")
		p, err := db.CreateProject(ctx, agentline.Project{Name: "Shop", Branding: agentline.Branding{DisplayName: "Shop Inc"}}, alice.ID)
		if err != nil || p.ID == 0 || p.Role != agentline.RoleOwner {
			t.Fatalf("CreateProject = %+v %v", p, err)
		}
		other, _ := db.CreateProject(ctx, agentline.Project{Name: "Other"}, bob.ID)

		list, err := db.ProjectsForUser(ctx, alice.ID)
		if err != nil || len(list) != 1 || list[0].ID != p.ID || list[0].Branding.DisplayName != "Shop Inc" {
			t.Fatalf("ProjectsForUser = %+v %v", list, err)
		}
		if _, err := db.MemberRole(ctx, p.ID, bob.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("bob in alice's project: %v", err)
		}
		m, created, err := db.SetMember(ctx, p.ID, "BOB@example.com", agentline.RoleViewer)
		if err != nil || !created || m.UserID != bob.ID || m.Role != agentline.RoleViewer {
			t.Fatalf("SetMember = %+v %v %v", m, created, err)
		}
		if _, _, err := db.SetMember(ctx, p.ID, "nobody@example.com", agentline.RoleViewer); code(err) != agentline.EInvalid {
			t.Fatalf("unknown email: %v", err)
		}
		if _, created, err := db.SetMember(ctx, p.ID, "bob@example.com", agentline.RoleEditor); err != nil || created {
			t.Fatalf("role change: %v %v", created, err)
		}
		if r, _ := db.MemberRole(ctx, p.ID, bob.ID); r != agentline.RoleEditor {
			t.Fatalf("role = %s", r)
		}
		// The last owner can be neither demoted nor removed.
		if _, _, err := db.SetMember(ctx, p.ID, "alice@example.com", agentline.RoleViewer); code(err) != agentline.EConflict {
			t.Fatalf("demote last owner: %v", err)
		}
		if err := db.RemoveMember(ctx, p.ID, alice.ID); code(err) != agentline.EConflict {
			t.Fatalf("remove last owner: %v", err)
		}
		db.SetMember(ctx, p.ID, "bob@example.com", agentline.RoleOwner)
		if err := db.RemoveMember(ctx, p.ID, alice.ID); err != nil {
			t.Fatalf("remove one of two owners: %v", err)
		}
		if err := db.RemoveMember(ctx, p.ID, alice.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("remove again: %v", err)
		}
		members, _ := db.Members(ctx, p.ID)
		if len(members) != 1 || members[0].Email != "bob@example.com" {
			t.Fatalf("members = %+v", members)
		}

		p.Name = "Shop 2"
		if got, err := db.UpdateProject(ctx, p); err != nil || got.Name != "Shop 2" {
			t.Fatalf("UpdateProject = %+v %v", got, err)
		}
		if err := db.DeleteProject(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Project(ctx, p.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("deleted project: %v", err)
		}
		if _, err := db.Project(ctx, other.ID); err != nil {
			t.Fatalf("other project: %v", err)
		}
	})
}

func TestAgentsAreScopedToTheirProject(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p1, _ := db.CreateProject(ctx, agentline.Project{Name: "one"}, u.ID)
		p2, _ := db.CreateProject(ctx, agentline.Project{Name: "two"}, u.ID)
		a := agentline.Agent{ProjectID: p1.ID, Name: "Ada", Instructions: "Be brief.", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI, Voice: "marin", Language: "en-US"}
		a, err := db.CreateAgent(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if pid, err := db.ProjectOf(ctx, agentline.KindAgent, a.ID); err != nil || pid != p1.ID {
			t.Fatalf("ProjectOf = %d %v", pid, err)
		}
		if _, err := db.ProjectOf(ctx, agentline.KindAgent, a.ID+100); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("ProjectOf missing: %v", err)
		}
		// Cross-tenant probes: every call scoped to p2 misses p1's agent.
		if _, err := db.Agent(ctx, p2.ID, a.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("read across projects: %v", err)
		}
		moved := a
		moved.ProjectID, moved.Name = p2.ID, "stolen"
		if _, err := db.UpdateAgent(ctx, moved); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("update across projects: %v", err)
		}
		if err := db.DeleteAgent(ctx, p2.ID, a.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("delete across projects: %v", err)
		}
		if list, _ := db.Agents(ctx, p2.ID); len(list) != 0 {
			t.Fatalf("p2 agents = %+v", list)
		}
		a.Greeting = "Hello!"
		got, err := db.UpdateAgent(ctx, a)
		if err != nil || got.Greeting != "Hello!" || got.Name != "Ada" || !got.UpdatedAt.After(a.CreatedAt.Add(-time.Millisecond)) {
			t.Fatalf("UpdateAgent = %+v %v", got, err)
		}
		if _, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: 999999, Name: "x", Model: "gpt-realtime", Provider: agentline.ProviderOpenAI}); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("agent in missing project: %v", err)
		}
		// Deleting the project takes its agents with it.
		db.DeleteProject(ctx, p1.ID)
		if _, err := db.ProjectOf(ctx, agentline.KindAgent, a.ID); !errors.Is(err, agentline.ErrNotFound) {
			t.Fatalf("agent outlived its project: %v", err)
		}
	})
}

func TestSettings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		v, err := db.EnsureSetting(ctx, "secret", "first")
		if err != nil || v != "first" {
			t.Fatalf("EnsureSetting = %q %v", v, err)
		}
		if v, _ := db.EnsureSetting(ctx, "secret", "second"); v != "first" {
			t.Fatalf("second EnsureSetting = %q", v)
		}
	})
}

// Concurrent writers queue on SQLite's write connection instead of failing
// with "database is locked".
func TestConcurrentWrites(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "a@example.com")
		p, _ := db.CreateProject(ctx, agentline.Project{Name: "p"}, u.ID)
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := db.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: fmt.Sprint("agent ", i), Model: "gpt-realtime", Provider: agentline.ProviderOpenAI})
				if err == nil {
					_, err = db.Agents(ctx, p.ID)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if list, _ := db.Agents(ctx, p.ID); len(list) != 50 {
			t.Fatalf("agents = %d", len(list))
		}
	})
}
