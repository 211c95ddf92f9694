package callsim_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/telephony/callsim"
)

// Twilio sends stop whenever it stops a stream: when the call is hung up
// or redirected through the REST API as well as at the callee's hang-up.
// Every simulated callee does: the sandbox ends its call (the context)
// while the callee waits for the greeting or speaks, and the server hears
// stop before the socket closes, never a bare close.
func TestSimulatedCalleesSendStopWhenTheCallIsEnded(t *testing.T) {
	for name, answer := range map[string]func(context.Context, string, callsim.Options) error{
		"person": callsim.Callee, "machine": callsim.Machine,
	} {
		t.Run(name, func(t *testing.T) {
			heard := make(chan []string, 1)
			started := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				conn, err := websocket.Accept(w, r, nil)
				if err != nil {
					return
				}
				defer conn.CloseNow()
				var events []string
				defer func() { heard <- events }()
				ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
				defer cancel()
				for {
					_, b, err := conn.Read(ctx)
					if err != nil {
						return
					}
					var m struct{ Event string }
					json.Unmarshal(b, &m)
					if m.Event != "media" {
						events = append(events, m.Event)
					}
					if m.Event == "start" {
						close(started)
					}
				}
			}))
			defer srv.Close()
			twiml := `<Response><Connect><Stream url="wss://bot.example/api/telephony/stream/1"></Stream></Connect><Hangup/></Response>`
			ctx, hangUp := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- answer(ctx, twiml, callsim.Options{Server: srv.URL}) }()
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the stream never started")
			}
			hangUp() // the carrier ends the call through REST
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the callee did not return after the call ended")
			}
			select {
			case events := <-heard:
				if strings.Join(events, ",") != "connected,start,stop" {
					t.Errorf("the server heard %v, want connected, start, stop", events)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the socket was not closed")
			}
		})
	}
}
