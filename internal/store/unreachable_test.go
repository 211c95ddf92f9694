package store_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// With its server stopped, every store call fails fast with an error that
// Unreachable recognizes; started again, the same DB serves without being
// reopened, and what was committed before is there.
func TestPostgresDownAndBack(t *testing.T) {
	pg := storetest.NewCluster(t)
	ctx := context.Background()
	db, err := store.Open(ctx, pg.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u := mustUser(t, db, "ann@example.com")
	p, err := db.CreateProject(ctx, agentline.Project{Name: "Shop"}, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	for i := range 5 {
		start := time.Now()
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := db.Project(qctx, p.ID)
		cancel()
		if err == nil || !store.Unreachable(err) {
			t.Fatalf("read %d with the server down: %v (Unreachable = false)", i, err)
		}
		if code := agentline.ErrorCode(err); code != agentline.EUnavailable {
			t.Fatalf("read %d with the server down: code %q, want %q", i, code, agentline.EUnavailable)
		}
		t.Logf("read %d: %v after %v", i, err, time.Since(start))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("read %d took %v with the server down", i, d)
		}
		_, err = db.CreateProject(ctx, agentline.Project{Name: "Lost"}, u.ID)
		if err == nil || !store.Unreachable(err) {
			t.Fatalf("write %d with the server down: %v", i, err)
		}
		if code := agentline.ErrorCode(err); code != agentline.EUnavailable {
			t.Fatalf("write %d with the server down: code %q, want %q", i, code, agentline.EUnavailable)
		}
	}
	pg.Start(t)
	got, err := db.Project(ctx, p.ID)
	if err != nil || got.Name != "Shop" {
		t.Fatalf("after restart: %+v, %v", got, err)
	}
	if _, err := db.CreateProject(ctx, agentline.Project{Name: "Again"}, u.ID); err != nil {
		t.Fatalf("write after restart: %v", err)
	}
}

func TestUnreachableIsNotEveryError(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "bob@example.com")
		_, err := db.CreateUser(ctx, u.Email, "hash") // a unique violation
		if err == nil || store.Unreachable(err) {
			t.Fatalf("duplicate user: %v, Unreachable must be false", err)
		}
		if _, err := db.Project(ctx, 999); err == nil || store.Unreachable(err) {
			t.Fatalf("missing project: %v, Unreachable must be false", err)
		}
	})
	if store.Unreachable(nil) {
		t.Fatal("Unreachable(nil)")
	}
}

// A server that takes the TCP connection and never answers (as a host
// behind a dropping firewall, or a hung one, does) fails the connect
// within the default connect timeout instead of hanging the request.
func TestPostgresConnectTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16) // taken, never read, never answered
	defer func() {
		ln.Close()
		for c := range held {
			c.Close()
		}
	}()
	go func() {
		defer close(held)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err = store.Open(ctx, "postgres://agentline@"+ln.Addr().String()+"/agentline?sslmode=disable")
	d := time.Since(start)
	if err == nil || !store.Unreachable(err) {
		t.Fatalf("open against a silent server: %v (Unreachable = false)", err)
	}
	if d > 10*time.Second {
		t.Fatalf("the connect took %v; the default connect timeout is 5 s", d)
	}
	t.Logf("failed after %v: %v", d.Round(time.Millisecond), err)
}
