package widget

import (
	"context"
	"strings"
	"testing"

	"github.com/agentline/agentline"
)

// Save twice, publish the first save: a widget session runs the published
// version (the provider's token request carries its instructions) and its
// conversation records it; a console test runs the latest draft, or the
// version it asks for.
func TestSessionsRunThePublishedVersion(t *testing.T) {
	f := newStartFixture(t, true)
	ctx := context.Background()
	a := f.agent
	var err error
	for _, text := range []string{"First save.", "Second save."} {
		a.Instructions = text
		if a, err = f.db.UpdateAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.db.PublishAgentVersion(ctx, a.ProjectID, a.ID, 2); err != nil {
		t.Fatal(err)
	}
	lastRequest := func() string {
		reqs := f.fake.Requests()
		return string(reqs[len(reqs)-1].Body)
	}
	versionOf := func(id string) int {
		t.Helper()
		conv, err := f.db.Conversation(ctx, a.ProjectID, id)
		if err != nil || conv.AgentVersion == nil {
			t.Fatalf("conversation %s: %+v %v", id, conv.AgentVersion, err)
		}
		return *conv.AgentVersion
	}
	got, err := f.h.startSession(ctx, channelRef{key: f.voiceKey}, sessionRequest{AgentID: a.ID, Origin: "https://shop.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if body := lastRequest(); !strings.Contains(body, "First save.") || strings.Contains(body, "Second save.") {
		t.Fatalf("provider got %s, want the published version's instructions", body)
	}
	if v := versionOf(got.Session.ID); v != 2 {
		t.Fatalf("session agent_version = %d, want 2", v)
	}
	test := channelRef{key: agentline.WidgetKey{ProjectID: a.ProjectID, ChannelID: TestChannelID}, testAgent: a.ID}
	for _, c := range []struct {
		version int
		want    string
		stored  int
	}{{0, "Second save.", 3}, {1, "Help with orders.", 1}} {
		test.testVersion = c.version
		got, err := f.h.startSession(ctx, test, sessionRequest{AgentID: a.ID, Origin: TestOrigin})
		if err != nil {
			t.Fatal(err)
		}
		if body := lastRequest(); !strings.Contains(body, c.want) {
			t.Fatalf("test of version %d: provider got %s, want %q", c.version, body, c.want)
		}
		if v := versionOf(got.Session.ID); v != c.stored {
			t.Fatalf("test of version %d recorded %d", c.version, v)
		}
	}
	test.testVersion = 99
	if _, err := f.h.startSession(ctx, test, sessionRequest{AgentID: a.ID, Origin: TestOrigin}); agentline.ErrorCode(err) != agentline.ENotFound {
		t.Fatalf("test of an unknown version: %v", err)
	}
}
