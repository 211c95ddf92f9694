package app_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/conversation"
	"github.com/agentline/agentline/internal/provider/providerfake"
	"github.com/agentline/agentline/internal/store"
)

// analyticsRow is one group of the cross-channel analytics.
type analyticsRow struct {
	Kind          string  `json:"kind"`
	Channel       string  `json:"channel"`
	AgentID       int64   `json:"agent_id"`
	EndReason     string  `json:"end_reason"`
	Conversations int64   `json:"conversations"`
	Minutes       float64 `json:"minutes"`
	ToolCalls     int64   `json:"tool_calls"`
	ToolErrors    int64   `json:"tool_errors"`
	Leads         int64   `json:"leads"`
}

// A project with widget sessions, a live chat and lead-capture leads from
// forms, and a phone call (recorded through the status-callback path, with
// a failed tool call in its log): GET /api/projects/{id}/analytics counts
// every one of them, and its totals and groups (per kind, agent, channel
// or number, end reason) match what the conversation and lead records
// say. On SQLite and PostgreSQL.
func TestAnalyticsAcrossChannels(t *testing.T) {
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testAnalyticsAcrossChannels(t, d)
		})
	}
}

func testAnalyticsAcrossChannels(t *testing.T, d store.Dialect) {
	fake := providerfake.New("sk-test", "g-test")
	providerSrv := httptest.NewServer(fake)
	t.Cleanup(providerSrv.Close)
	s := apptest.StartFresh(t, d, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": providerSrv.URL})
	ctx := context.Background()
	_, tok := s.NewUser(t, "owner@example.com")
	var p agentline.Project
	var web, phone agentline.Agent
	var site, capture, chat agentline.Channel
	var key struct{ Key string }
	s.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	pp := "/api/projects/" + itoa(p.ID)
	s.Must(t, 201, "POST", pp+"/agents", tok, map[string]string{"name": "Web"}, &web)
	s.Must(t, 201, "POST", pp+"/agents", tok, map[string]string{"name": "Phone"}, &phone)
	s.Must(t, 201, "POST", pp+"/channels", tok, map[string]any{"type": "voice_widget", "name": "site", "agent_id": web.ID}, &site)
	s.Must(t, 201, "POST", pp+"/channels", tok, map[string]any{"type": "form", "name": "Contact",
		"settings": map[string]any{"form": map[string]string{"mode": "lead_capture"}}}, &capture)
	s.Must(t, 201, "POST", pp+"/channels", tok, map[string]any{"type": "form", "name": "Chat", "agent_id": web.ID,
		"settings": map[string]any{"form": map[string]string{"mode": "live_chat"}}}, &chat)
	s.Must(t, 201, "POST", "/api/channels/"+itoa(site.ID)+"/key", tok, map[string]any{}, &key)
	widget := func(path string, body any) *apptest.Response {
		req := s.Request(t, "POST", path, "", body)
		req.Header.Set("X-API-Key", key.Key)
		return s.Send(t, req)
	}

	// Widget: two sessions that end, one with a tool call that failed.
	for k, tool := range []bool{true, false} {
		var sess struct {
			SessionID string `json:"session_id"`
		}
		widget("/widget/v1/session", map[string]any{"agent_id": web.ID}).JSON(t, &sess)
		now := time.Now().UTC().Truncate(time.Millisecond) // the session started just before
		events := []any{map[string]any{"type": "transcript", "at": now, "data": map[string]string{"role": "user", "text": "Hello"}}}
		if tool {
			events = append(events, map[string]any{"type": "tool_call", "at": now.Add(time.Second),
				"data": map[string]any{"name": "lookup_order", "arguments": map[string]string{"id": "42"}, "is_error": true}})
		}
		events = append(events, map[string]any{"type": "session_ended", "at": now.Add(time.Duration(3+k) * time.Second)})
		if r := widget("/widget/v1/analytics", map[string]any{"session_id": sess.SessionID, "events": events}); r.Status != 202 {
			t.Fatalf("analytics: %s", r)
		}
	}
	// Forms: two leads captured, one live chat (a lead and its session).
	person := map[string]string{"name": "Ada", "email": "ada@example.com"}
	for range 2 {
		s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(capture.ID), "", person, nil)
	}
	s.Must(t, 201, "POST", "/api/channels/form/submit/"+itoa(chat.ID), "", person, nil)
	// Phone: an inbound call on the phone agent's number that lasts 42 s.
	db := s.App.Store
	n, err := db.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: "+14155550100", AgentID: &phone.ID,
		Status: agentline.NumberActive, CarrierSID: "PN1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{agentline.CallInProgress, agentline.CallCompleted} {
		e := agentline.CallEvent{CallSID: "CA1", Status: st, Direction: agentline.CallInbound, From: "+14155550199", To: n.PhoneNumber}
		if st == agentline.CallCompleted {
			secs := 42
			e.DurationS, e.EndReason = &secs, "caller_hangup"
			e.Log = []agentline.CallLogEntry{
				{Type: "transcript", Role: "caller", Text: "Where is my parcel?", At: time.Now()},
				{Type: "tool_call", Data: json.RawMessage(`{"name":"lookup_order","arguments":{"id":"7"},"result":"{}","is_error":false}`), At: time.Now()},
			}
		}
		if _, err := db.ApplyCallEvent(ctx, e, conversation.CallChanged); err != nil {
			t.Fatal(err)
		}
	}

	// What the records say.
	var list struct {
		Conversations []agentline.Conversation `json:"conversations"`
	}
	s.Must(t, 200, "GET", pp+"/conversations?limit=100", tok, nil, &list)
	var leads struct {
		Leads []agentline.Lead `json:"leads"`
	}
	s.Must(t, 200, "GET", pp+"/leads", tok, nil, &leads)
	var want analyticsRow
	kinds, agents, channels, reasons := map[string]int64{}, map[int64]int64{}, map[string]int64{}, map[string]int64{}
	var ms int64
	for _, c := range list.Conversations {
		var full agentline.Conversation
		s.Must(t, 200, "GET", "/api/conversations/"+c.ID, tok, nil, &full)
		want.Conversations++
		ms += full.DurationMS
		want.ToolCalls += int64(len(full.ToolCalls))
		for _, u := range full.ToolCalls {
			if u.IsError {
				want.ToolErrors++
			}
		}
		kinds[c.Kind]++
		agents[c.AgentID]++
		reasons[c.EndReason]++
		if c.ChannelID != nil {
			channels["channel:"+itoa(*c.ChannelID)]++
		} else if c.NumberID != nil {
			channels["number:"+itoa(*c.NumberID)]++
		}
	}
	want.Leads = int64(len(leads.Leads))
	if want.Conversations != 4 || kinds["widget"] != 2 || kinds["live_chat"] != 1 || kinds["phone"] != 1 || want.Leads != 3 ||
		want.ToolCalls != 2 || want.ToolErrors != 1 || ms < 42000+6000 {
		t.Fatalf("the records are not what the test made: %d conversations %v, %d leads, %d tool calls (%d errors), %d ms",
			want.Conversations, kinds, want.Leads, want.ToolCalls, want.ToolErrors, ms)
	}

	var an struct {
		Conversations struct {
			Totals     analyticsRow   `json:"totals"`
			ByKind     []analyticsRow `json:"by_kind"`
			ByAgent    []analyticsRow `json:"by_agent"`
			ByChannel  []analyticsRow `json:"by_channel"`
			EndReasons []analyticsRow `json:"end_reasons"`
		} `json:"conversations"`
	}
	s.Must(t, 200, "GET", pp+"/analytics", tok, nil, &an)
	got := an.Conversations
	tot := got.Totals
	if tot.Conversations != want.Conversations || tot.Leads != want.Leads || tot.ToolCalls != want.ToolCalls || tot.ToolErrors != want.ToolErrors ||
		math.Abs(tot.Minutes*60000-float64(ms)) > 0.5 {
		t.Errorf("totals %+v; the records: %d conversations, %d leads, %d tool calls (%d errors), %d ms", tot, want.Conversations, want.Leads,
			want.ToolCalls, want.ToolErrors, ms)
	}
	check := func(name string, rows []analyticsRow, key func(analyticsRow) string, want map[string]int64) {
		t.Helper()
		seen := map[string]int64{}
		for _, r := range rows {
			seen[key(r)] += r.Conversations
		}
		for k, v := range want {
			if seen[k] != v {
				t.Errorf("%s %q: %d conversations, the records say %d (rows %+v)", name, k, seen[k], v, rows)
			}
		}
		if len(seen) != len(want) && name != "by_channel" {
			t.Errorf("%s has groups %v, the records %v", name, seen, want)
		}
	}
	check("by_kind", got.ByKind, func(r analyticsRow) string { return r.Kind }, kinds)
	byAgent := map[string]int64{}
	for id, v := range agents {
		byAgent[itoa(id)] = v
	}
	check("by_agent", got.ByAgent, func(r analyticsRow) string { return itoa(r.AgentID) }, byAgent)
	check("by_channel", got.ByChannel, func(r analyticsRow) string { return r.Channel }, channels)
	check("end_reasons", got.EndReasons, func(r analyticsRow) string { return r.EndReason }, reasons)
	// Leads per form channel, and the phone number's minutes.
	leadsBy := map[string]int64{}
	for _, l := range leads.Leads {
		leadsBy["channel:"+itoa(l.ChannelID)]++
	}
	for _, r := range got.ByChannel {
		if r.Leads != leadsBy[r.Channel] {
			t.Errorf("by_channel %s: %d leads, the records %d", r.Channel, r.Leads, leadsBy[r.Channel])
		}
		if r.Channel == "number:"+itoa(n.ID) && (r.Conversations != 1 || r.Minutes != 0.7 || r.ToolCalls != 1) {
			t.Errorf("the number's row %+v, want 1 conversation of 0.7 minutes with 1 tool call", r)
		}
	}
}
