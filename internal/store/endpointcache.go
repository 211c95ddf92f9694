package store

import (
	"sync"

	"github.com/agentline/agentline"
)

// endpointCache keeps each project's enabled webhook endpoints, which every
// emit reads to choose its deliveries (a phone call emits in three
// transactions). Only on SQLite: one process owns the file
// (docs/deploy.md), so every change to the endpoints is made here and
// clears the cache once it is committed (webhooksChanged). PostgreSQL's
// instances each read every time: another instance's change must count at
// once. What it holds chooses deliveries and nothing else (a delivery
// reads its endpoint, secret included, when it is sent).
type endpointCache struct {
	mu        sync.Mutex
	gen       uint64 // moves at every clear, so a read that began before one is not kept
	byProject map[int64][]agentline.WebhookEndpoint
}

// get returns the project's cached endpoints, or the generation a read of
// them now would be kept under.
func (c *endpointCache) get(projectID int64) ([]agentline.WebhookEndpoint, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	eps, ok := c.byProject[projectID]
	return eps, c.gen, ok
}

// put keeps eps, read under generation gen, unless the endpoints have
// changed since.
func (c *endpointCache) put(projectID int64, eps []agentline.WebhookEndpoint, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.byProject == nil {
		c.byProject = map[int64][]agentline.WebhookEndpoint{}
	}
	c.byProject[projectID] = eps
}

// clear forgets every project's endpoints.
func (c *endpointCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.byProject = nil
}

// webhooksChanged clears the endpoint cache after a committed change to
// webhook endpoints (or err, a change that may have been committed).
func (db *DB) webhooksChanged() {
	if db.endpointCache != nil {
		db.endpointCache.clear()
	}
}
