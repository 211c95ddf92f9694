// Package cluster holds agentline's multi-instance tests: they build the
// real binary once, run two or three instances as child processes on
// loopback ports sharing a throwaway PostgreSQL and a redis-server, and show
// that keys, rate limits, sessions and calls hold across instances, that an
// instance drains gracefully on SIGTERM, and that PostgreSQL going down and
// coming back costs no data and no restart. `make e2e-cluster` runs them.
//
// The package has no code of its own besides its tests.
package cluster
