package telephony_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// campaignContact stores a draft campaign of agent ada with one contact,
// and returns the campaign and the contact.
func (e *phoneEnv) campaignContact(ctx context.Context, name, number string, vars map[string]string) (agentline.Campaign, agentline.CampaignContact) {
	e.t.Helper()
	st := e.app.Store
	c, err := st.CreateCampaign(ctx, agentline.Campaign{ProjectID: e.project, AgentID: e.ada, Name: name,
		CallingWindow:      agentline.CallingWindow{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "20:00"},
		MaxConcurrentCalls: 1, CallsPerSecond: 1, MaxAttempts: 3, RetryAfter: time.Hour, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, _, _, err := st.AddContacts(ctx, e.project, c.ID, []agentline.CampaignContact{{PhoneNumber: number, Variables: vars}}, 10); err != nil {
		e.t.Fatal(err)
	}
	list, err := st.CampaignContacts(ctx, e.project, c.ID, "", 0, 10)
	if err != nil || len(list) != 1 {
		e.t.Fatalf("contacts %+v %v", list, err)
	}
	return c, list[0]
}

// campaignCall places an outbound call from ada to the contact, links it
// to the campaign and contact as the dialing engine does (the record's
// campaign_id, contact_id and variables, written before the carrier
// answers), and opens its media stream. It returns the carrier's side and
// the model's session once the session.update has come.
func (e *phoneEnv) campaignCall(ctx context.Context, c agentline.Campaign, ct agentline.CampaignContact) (*callsim.Call, *realtimefake.Session) {
	e.t.Helper()
	res := e.do(e.editor, "POST", fmt.Sprintf("/api/agents/%d/telephony/outbound", e.ada), map[string]any{"to_number": ct.PhoneNumber})
	if res.status != 201 {
		e.t.Fatalf("outbound: %d %s", res.status, res.body)
	}
	vars, _ := json.Marshal(ct.Variables)
	if _, err := e.app.Store.JobPool().ExecContext(ctx, `UPDATE calls SET campaign_id = ?, contact_id = ?, variables = ?
		WHERE project_id = ? AND to_number = ?`, c.ID, ct.ID, string(vars), e.project, ct.PhoneNumber); err != nil {
		e.t.Fatal(err)
	}
	placed := e.fake.Calls()[len(e.fake.Calls())-1]
	e.fake.SetCallStatus(placed.SID, "in-progress")
	s, err := callsim.ParseTwiML(placed.Twiml)
	if err != nil {
		e.t.Fatal(err)
	}
	call, err := callsim.Open(ctx, s, callsim.Options{AuthToken: e.fake.AuthToken(), BotHost: botHost, Server: e.srv.URL, CallSID: placed.SID, EchoMarks: true})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { call.Close() })
	ss, err := e.model.Next(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := ss.WaitType(ctx, "session.update"); err != nil {
		e.t.Fatal(err)
	}
	return call, ss
}

// A campaign call's variables fill the agent's instructions and greeting,
// it offers opt_out, and its record and conversation carry the campaign,
// the contact and the variables.
func TestCampaignCallVariables(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	if res := e.do(e.owner, "PATCH", fmt.Sprintf("/api/agents/%d", e.ada), map[string]any{
		"instructions": "Remind {{first_name}} that the {{plan}} plan renews; {{unknown}} stays.", "greeting": "Hi {{ first_name }}, it is Acme."}); res.status != 200 {
		t.Fatalf("agent: %d %s", res.status, res.body)
	}
	camp, ct := e.campaignContact(ctx, "Renewals", "+14155550123", map[string]string{"first_name": "Ada", "plan": "Pro"})
	c, ss := e.campaignCall(ctx, camp, ct)
	update, _ := ss.WaitType(ctx, "session.update")
	var u struct {
		Session struct {
			Instructions string
			Tools        []struct{ Name string }
		}
	}
	json.Unmarshal(update.Raw, &u)
	var tools []string
	for _, tl := range u.Session.Tools {
		tools = append(tools, tl.Name)
	}
	if !strings.HasPrefix(u.Session.Instructions, "Remind Ada that the Pro plan renews; {{unknown}} stays.") || !contains(tools, "opt_out") {
		t.Fatalf("session.update = %s", update.Raw)
	}
	first, err := ss.WaitType(ctx, "response.create")
	if err != nil || !strings.Contains(string(first.Raw), "Hi Ada, it is Acme.") {
		t.Fatalf("first response.create = %s %v", first.Raw, err)
	}
	c.Stop(ctx)
	rec := e.record(c.CallSID)
	if rec["campaign_id"] != float64(camp.ID) || rec["contact_id"] != float64(ct.ID) || fmt.Sprint(rec["variables"]) != "map[first_name:Ada plan:Pro]" {
		t.Fatalf("call record = %v", rec)
	}
	var conv agentline.Conversation
	e.do(e.viewer, "GET", fmt.Sprintf("/api/conversations/call_%d", int64(rec["id"].(float64))), nil).json(&conv)
	if conv.CampaignID == nil || *conv.CampaignID != camp.ID || conv.ContactID == nil || *conv.ContactID != ct.ID || conv.Variables["plan"] != "Pro" {
		t.Fatalf("conversation = %+v", conv)
	}
}

// opt_out on a campaign call: the number goes on the project's
// do-not-call list, the contact is opted_out (and the same number pending
// in another campaign do_not_call), the model gets the tool's answer and a
// response.create for its goodbye, and the call ends once that goodbye
// has played, recorded as opted_out.
func TestOptOutTool(t *testing.T) {
	t.Parallel()
	e := newPhoneEnv(t, nil)
	ctx := testCtx(t)
	const number = "+14155550124"
	camp, ct := e.campaignContact(ctx, "Renewals", number, map[string]string{"first_name": "Ada"})
	other, _ := e.campaignContact(ctx, "Survey", number, nil)
	c, ss := e.campaignCall(ctx, camp, ct)

	ss.Send(ctx, map[string]any{"type": "response.created"})
	ss.Send(ctx, map[string]any{"type": "response.function_call_arguments.done", "call_id": "call_out", "name": "opt_out", "arguments": "{}"})
	ss.Send(ctx, map[string]any{"type": "response.done"})
	out, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool {
		return ev.Type == "conversation.item.create" && strings.Contains(string(ev.Raw), `"call_id":"call_out"`)
	})
	if err != nil || !strings.Contains(string(out.Raw), `\"ok\":true`) {
		t.Fatalf("tool output %s %v", out.Raw, err)
	}
	if _, err := ss.WaitFor(ctx, func(ev realtimefake.Event) bool {
		return ev.Type == "response.create" && !strings.Contains(string(ev.Raw), "instructions")
	}); err != nil {
		t.Fatal("no response.create for the goodbye")
	}
	st := e.app.Store
	if on, err := st.OnDoNotCall(ctx, e.project, number); err != nil || !on {
		t.Fatalf("on the do-not-call list: %v %v", on, err)
	}
	if list, _ := st.DoNotCallList(ctx, e.project, "", 10); len(list) != 1 || list[0].Reason != "opted out on a call" {
		t.Fatalf("do-not-call list %+v", list)
	}
	if got := contactStatus(t, e, camp.ID); got != agentline.ContactOptedOut {
		t.Fatalf("contact status %s", got)
	}
	if got := contactStatus(t, e, other.ID); got != agentline.ContactDoNotCall {
		t.Fatalf("the other campaign's contact: %s", got)
	}
	select {
	case <-c.Done():
		t.Fatal("the call ended before the goodbye")
	case <-time.After(200 * time.Millisecond):
	}
	ss.Send(ctx, map[string]any{"type": "response.created"})
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "item_id": "item_bye", "delta": base64.StdEncoding.EncodeToString(frame(5))})
	ss.Send(ctx, map[string]any{"type": "response.output_audio.done", "item_id": "item_bye"})
	ss.Send(ctx, map[string]any{"type": "response.done"})
	waitClosed(t, c, ss)
	if len(c.Audio()) != callsim.FrameBytes {
		t.Fatal("the goodbye did not reach the person before the hang-up")
	}
	rec := e.record(c.CallSID)
	if rec["end_reason"] != "opted_out" || !strings.Contains(fmt.Sprint(rec["events"]), "opt_out") {
		t.Fatalf("record = %v", rec)
	}
}

func contactStatus(t *testing.T, e *phoneEnv, campaignID int64) string {
	t.Helper()
	list, err := e.app.Store.CampaignContacts(context.Background(), e.project, campaignID, "", 0, 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("contacts %+v %v", list, err)
	}
	return list[0].Status
}
