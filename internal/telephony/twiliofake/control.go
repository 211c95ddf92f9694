package twiliofake

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// FailNext makes the next authenticated request fail with a Twilio error of
// this HTTP status, error code and message. Calls queue up.
func (f *Fake) FailNext(status, code int, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = append(f.fail, failure{status, code, message})
}

// Hold is a request the fake keeps waiting.
type Hold struct {
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

// Arrived is closed when the held request has come in.
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Release lets the held request proceed.
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// HoldNext makes the next authenticated request wait until Release (or
// until its client gives up), to test timeouts and races.
func (f *Fake) HoldNext() *Hold {
	h := &Hold{arrived: make(chan struct{}), release: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds = append(f.holds, h)
	return h
}

// AnswerLateNext makes the fake carry out the next authenticated request
// at once but hold its answer for d: a client that times out meanwhile has
// had its purchase or call made without hearing of it, as when an answer
// is lost on the way. Calls queue up.
func (f *Fake) AnswerLateNext(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.late = append(f.late, d)
}

// gate checks Basic auth and the account in the path, then applies the
// failure and hold switches.
func (f *Fake) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(user), []byte(f.accountSID)) != 1 ||
			subtle.ConstantTimeCompare([]byte(pass), []byte(f.authToken)) != 1 {
			writeError(w, http.StatusUnauthorized, 20003, "Authentication Error - invalid username")
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/2010-04-01/Accounts/"+f.accountSID+"/") {
			writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
			return
		}
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path)
		var fail *failure
		if len(f.fail) > 0 {
			fail = &f.fail[0]
			f.fail = f.fail[1:]
		}
		var hold *Hold
		if len(f.holds) > 0 {
			hold = f.holds[0]
			f.holds = f.holds[1:]
		}
		late := time.Duration(-1)
		if len(f.late) > 0 {
			late = f.late[0]
			f.late = f.late[1:]
		}
		f.mu.Unlock()
		if hold != nil {
			close(hold.arrived)
			select {
			case <-hold.release:
			case <-r.Context().Done():
				return
			}
		}
		if fail != nil {
			writeError(w, fail.status, fail.code, fail.message)
			return
		}
		if late >= 0 {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r.WithContext(context.WithoutCancel(r.Context())))
			select {
			case <-time.After(late):
			case <-r.Context().Done():
				return
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		next.ServeHTTP(w, r)
	})
}
