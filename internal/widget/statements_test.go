package widget_test

import (
	"testing"
	"time"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// TestStatementsPerRequest holds the public API's hot requests to their
// database round trips, counted by the store, so that they cannot creep
// back: with warm caches a config reads nothing, and a session of a project
// without webhook endpoints writes its row in one statement, reading
// nothing else: its channel, agent and tool definitions come from the
// config cache. (A project with an endpoint pays a transaction with its
// conversation.started event: store's TestCreateWidgetSessionPaths.)
func TestStatementsPerRequest(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, envOptions{db: db, cacheTTL: time.Minute})
		session := map[string]any{"agent_id": e.agent.ID}
		// Warm up: the key, the config and the tool definitions are
		// cached, the key's last use is written (once a minute).
		e.do("GET", "/widget/v1/config", "", e.key, nil, 200, nil)
		e.do("POST", "/widget/v1/session", "", e.key, session, 201, nil)
		defs := e.tools.definitions.Load()

		const n = 5
		before := db.Statements()
		for range n {
			e.do("GET", "/widget/v1/config", "", e.key, nil, 200, nil)
		}
		if got := db.Statements() - before; got != 0 {
			t.Errorf("%d config requests made %d statements, want 0", n, got)
		}
		before = db.Statements()
		for range n {
			e.do("POST", "/widget/v1/session", "", e.key, session, 201, nil)
		}
		// One insert that checks for webhook endpoints itself: the project
		// has none, so there is no event to write with it and no transaction.
		if got := db.Statements() - before; got != n {
			t.Errorf("%d session requests made %d statements, want %d (one insert each)", n, got, n)
		}
		if got := e.tools.definitions.Load() - defs; got != 0 {
			t.Errorf("%d sessions read the tool definitions %d times, want 0 (cached)", n, got)
		}
	})
}
