package widget

import (
	"context"
	"encoding/json"
	"testing"
)

// TestStartSessionMapsVoice: an agent's voice the realtime API does not
// take (nova, a text-to-speech voice) reaches the provider mapped, as on
// the phone path, instead of failing the visitor's session.
func TestStartSessionMapsVoice(t *testing.T) {
	f := newStartFixture(t, true)
	ctx := context.Background()
	f.agent.Voice = "nova"
	if _, err := f.db.UpdateAgent(ctx, f.agent); err != nil {
		t.Fatal(err)
	}
	if _, err := f.h.startSession(ctx, channelRef{key: f.voiceKey}, sessionRequest{AgentID: f.agent.ID}); err != nil {
		t.Fatal(err)
	}
	reqs := f.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider requests", len(reqs))
	}
	var body struct {
		Session struct {
			Audio struct{ Output struct{ Voice string } }
		}
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if v := body.Session.Audio.Output.Voice; v != "coral" {
		t.Fatalf("voice sent = %q, want coral (nova mapped)", v)
	}
}
