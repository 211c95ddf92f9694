// Package fakeserver is what the WebSocket fakes of realtime providers
// (realtimefake, geminilivefake) share: the loopback server that keeps the
// sessions it accepted, and a session's client with the signal a test
// waits on. The fakes keep their own protocol; this holds only the
// bookkeeping, so both start, wait and end the same way.
package fakeserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Session is what a fake's session must offer the server: a way to cut it
// when the server closes.
type Session interface {
	Drop()
}

// Server is a fake's HTTP server on a loopback port and the sessions it
// accepted, in order.
type Server[S Session] struct {
	http *httptest.Server
	next chan S
	mu   sync.Mutex
	all  []S
}

// Start serves h on a loopback port; Close stops it.
func Start[S Session](h http.Handler) *Server[S] {
	return &Server[S]{http: httptest.NewServer(h), next: make(chan S, 1024)}
}

// URL is the server's base URL (http://127.0.0.1:port).
func (s *Server[S]) URL() string { return s.http.URL }

// Add records a session that connected, for Count, All and Next. Next sees
// the first 1024 not yet taken; later ones only count, so a load run that
// never calls Next does not block.
func (s *Server[S]) Add(ss S) {
	s.mu.Lock()
	s.all = append(s.all, ss)
	s.mu.Unlock()
	select {
	case s.next <- ss:
	default:
	}
}

// Next waits for the next session to connect.
func (s *Server[S]) Next(ctx context.Context) (S, error) {
	select {
	case ss := <-s.next:
		return ss, nil
	case <-ctx.Done():
		var zero S
		return zero, ctx.Err()
	}
}

// Count returns how many sessions connected so far.
func (s *Server[S]) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.all)
}

// All returns every session so far, in the order they connected.
func (s *Server[S]) All() []S {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]S(nil), s.all...)
}

// Close cuts every session and stops the server. The sessions go first:
// httptest's Close waits for handlers, and a session's handler runs until
// its socket ends.
func (s *Server[S]) Close() {
	s.mu.Lock()
	for _, ss := range s.all {
		ss.Drop()
	}
	s.mu.Unlock()
	s.http.Close()
}
