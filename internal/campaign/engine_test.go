package campaign_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// Contacts are called only inside their window in their own time, on a
// test clock: on Monday 7 January 2030 (winter) New York opens at 14:00
// UTC, Los Angeles at 17:00; a number whose prefix maps to both Anchorage
// and Adak waits for the later of the two, Adak, at 19:00 UTC, though
// Anchorage opened at 18:00. A contact outside its window waits for its
// opening (next_attempt_at), and a change of the window applies at once.
func TestEngineCallsInsideLocalWindows(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		day := time.Date(2030, 1, 7, 0, 0, 0, 0, time.UTC)
		at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
		e := newEngineEnv(t, db, agentline.Campaign{
			CallingWindow:      agentline.CallingWindow{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "20:00"},
			MaxConcurrentCalls: 5, CallsPerSecond: 50, MaxAttempts: 1, RetryAfter: time.Hour,
			Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}}, at(14, 30))
		const ny, la, alaska = "+12125550101", "+13105550102", "+19075551234"
		e.add(t, ny+"@America/New_York", la+"@America/Los_Angeles", alaska)
		e.transition(t, agentline.CampaignDraft, agentline.CampaignRunning)
		called := func() []string {
			var out []string
			for _, d := range e.dialer.log() {
				out = append(out, d.To)
			}
			return out
		}
		next := func(phone string) time.Time {
			ct := e.contacts(t)[phone]
			if ct.NextAttemptAt == nil {
				return time.Time{}
			}
			return *ct.NextAttemptAt
		}

		e.pass(t, time.Second) // 09:30 in New York, 06:30 in Los Angeles
		if got := called(); len(got) != 1 || got[0] != ny {
			t.Fatalf("at 14:30 UTC called %v, want New York only", got)
		}
		if !next(la).Equal(at(17, 0)) || !next(alaska).Equal(at(19, 0)) {
			t.Fatalf("waiting until %v (Los Angeles) and %v (Alaska), want 17:00 and 19:00 UTC", next(la), next(alaska))
		}
		e.clock.set(at(17, 30))
		e.pass(t, time.Second)
		e.clock.set(at(18, 30)) // 09:30 in Anchorage, 08:30 in Adak
		e.pass(t, time.Second)
		if got := called(); len(got) != 2 || got[1] != la {
			t.Fatalf("at 18:30 UTC called %v, want New York then Los Angeles", got)
		}
		e.clock.set(at(19, 30))
		e.pass(t, time.Second)
		if got := called(); len(got) != 3 || got[2] != alaska {
			t.Fatalf("at 19:30 UTC called %v, want Alaska last", got)
		}
		if c := e.campaign(t); c.Status != agentline.CampaignCompleted || c.Counts.Completed != 3 {
			t.Fatalf("campaign %+v", c)
		}

		// A window moved earlier applies at once to a contact that waits.
		e2 := newEngineEnv(t, storetest.Open(t, db.Dialect()), agentline.Campaign{
			CallingWindow: agentline.CallingWindow{Days: []string{"tue"}, Start: "09:00", End: "20:00"}, MaxConcurrentCalls: 1,
			CallsPerSecond: 1, MaxAttempts: 1, RetryAfter: time.Hour, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}}, at(14, 30))
		e2.add(t, ny+"@America/New_York")
		e2.transition(t, agentline.CampaignDraft, agentline.CampaignRunning)
		e2.pass(t, time.Second)
		if len(e2.dialer.log()) != 0 || !next2(t, e2, ny).Equal(at(24+14, 0)) {
			t.Fatalf("on a Monday under a Tuesday window: called %v, waiting until %v", e2.dialer.log(), next2(t, e2, ny))
		}
		c := e2.campaign(t)
		c.CallingWindow.Days = []string{"mon", "tue"}
		if _, err := db2(e2).UpdateCampaign(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		e2.pass(t, time.Second)
		if len(e2.dialer.log()) != 1 {
			t.Fatalf("after the window gained Monday: called %v", e2.dialer.log())
		}
	})
}

func next2(t *testing.T, e *engineEnv, phone string) time.Time {
	t.Helper()
	if ct := e.contacts(t)[phone]; ct.NextAttemptAt != nil {
		return *ct.NextAttemptAt
	}
	return time.Time{}
}

func db2(e *engineEnv) *store.DB { return e.db }

// A campaign with the sandbox's last-digit mix and numbers on the
// do-not-call list completes with the counts the rules give: persons
// completed, machines voicemail, busy lines busy and unanswered phones
// no_answer after max_attempts, listed numbers never dialed; never more
// than max_concurrent_calls live at once, nor more dials in any second
// than calls_per_second; persons dialed once, one dial per attempt.
func TestEngineCompletesACampaignWithinItsLimits(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		const n, listed, maxLive, cps = 120, 5, 6, 25
		e := newEngineEnv(t, db, agentline.Campaign{CallingWindow: everyDay, MaxConcurrentCalls: maxLive, CallsPerSecond: cps,
			MaxAttempts: 2, RetryAfter: time.Second, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}}, time.Now())
		e.dialer.ring = 150 * time.Millisecond
		ctx := context.Background()
		var numbers []string
		for i := range n {
			numbers = append(numbers, fmt.Sprintf("+1415555%04d", 1000+i))
		}
		for _, phone := range numbers[:listed] {
			if _, _, err := db.AddDoNotCall(ctx, e.project, agentline.DoNotCall{PhoneNumber: phone}); err != nil {
				t.Fatal(err)
			}
		}
		e.add(t, numbers...)
		e.transition(t, agentline.CampaignDraft, agentline.CampaignRunning)
		want := agentline.CampaignCounts{Total: n, DoNotCall: listed}
		for _, phone := range numbers[listed:] {
			status, by := byLastDigit(phone)
			want.Add(agentline.CallOutcome(agentline.Call{Status: status, AnsweredBy: by}), 1)
			want.Total--
		}
		for deadline := time.Now().Add(2 * time.Minute); e.campaign(t).Status == agentline.CampaignRunning; {
			if time.Now().After(deadline) {
				t.Fatalf("not completed: %+v", e.campaign(t).Counts)
			}
			e.pass(t, 5*time.Second)
			time.Sleep(100 * time.Millisecond) // retries are due a second after the end
		}
		if got := e.campaign(t).Counts; got != want {
			t.Fatalf("counts %+v, want %+v", got, want)
		}
		log := e.dialer.log()
		perNumber := map[string]int{}
		for _, d := range log {
			perNumber[d.To]++
		}
		for _, phone := range numbers {
			status, by := byLastDigit(phone)
			wantDials := 2
			switch {
			case perNumber[phone] == 0 && phone <= numbers[listed-1]:
				continue
			case status == agentline.CallCompleted && by == agentline.AnsweredByHuman:
				wantDials = 1
			}
			if perNumber[phone] != wantDials {
				t.Errorf("%s dialed %d times, want %d", phone, perNumber[phone], wantDials)
			}
		}
		if e.dialer.peak > maxLive {
			t.Errorf("%d calls live at once, more than max_concurrent_calls %d", e.dialer.peak, maxLive)
		}
		if worst := maxInAnySecond(log); worst > cps {
			t.Errorf("%d dials within one second, more than calls_per_second %d", worst, cps)
		}
		t.Logf("%d dials; at most %d live at once (limit %d), at most %d in any second (limit %d)",
			len(log), e.dialer.peak, maxLive, maxInAnySecond(log), cps)
	})
}

// maxInAnySecond is the most dials sent to the carrier whose times fall
// within one second of each other ([t, t+1s) for some t).
func maxInAnySecond(log []dialed) int {
	var times []time.Time
	for _, d := range log {
		if d.CallID != 0 { // reserved, so sent to the carrier
			times = append(times, d.At)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	worst := 0
	for i, j := 0, 0; j < len(times); j++ {
		for times[j].Sub(times[i]) >= time.Second {
			i++
		}
		worst = max(worst, j-i+1)
	}
	return worst
}

// Pausing stops new dials at once and lets live calls end; resuming goes
// on; a call the phone channel refuses for now (the project's cap on live
// calls) gives its attempt back instead of failing the contact, and a call
// the carrier refuses fails the attempt, retried by the rule.
func TestEnginePausesAndTakesRefusals(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEngineEnv(t, db, agentline.Campaign{CallingWindow: everyDay, MaxConcurrentCalls: 10, CallsPerSecond: 10,
			MaxAttempts: 2, RetryAfter: time.Second, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}}, time.Now())
		e.add(t, "+14155551001", "+14155551002", "+14155551003", "+14155551004")
		e.transition(t, agentline.CampaignDraft, agentline.CampaignRunning)
		full := &agentline.Error{Code: agentline.ERateLimited, Message: "this project already has 10 calls in progress"}
		e.dialer.refuse = func(to string) error {
			switch to {
			case "+14155551002":
				return full
			case "+14155551003":
				return &agentline.Error{Code: agentline.ECarrier, Message: "the carrier refused to create call"}
			}
			return nil
		}
		e.pass(t, 3*time.Second)
		cs := e.contacts(t)
		if ct := cs["+14155551002"]; ct.Status != agentline.ContactPending || ct.Attempts != 0 || len(ct.Dials) != 0 {
			t.Fatalf("refused for now: %+v", ct)
		}
		if len(e.dialer.log()) != 1 || cs["+14155551004"].Attempts != 0 {
			t.Fatalf("the pass went on after the project's cap: %v %+v", e.dialer.log(), cs["+14155551004"])
		}
		e.dialer.refuse = func(to string) error {
			if to == "+14155551003" {
				return &agentline.Error{Code: agentline.ECarrier, Message: "the carrier refused to create call"}
			}
			return nil
		}
		e.pass(t, 3*time.Second)
		if ct := e.contacts(t)["+14155551003"]; ct.Status != agentline.ContactPending || ct.Attempts != 1 ||
			ct.LastOutcome == nil || ct.LastOutcome.Outcome != agentline.ContactFailed {
			t.Fatalf("refused by the carrier: %+v %+v", ct, ct.LastOutcome)
		}
		// Paused: no dial, though the retry is due.
		e.transition(t, agentline.CampaignRunning, agentline.CampaignPaused)
		time.Sleep(1100 * time.Millisecond)
		before := len(e.dialer.log())
		e.pass(t, time.Second)
		if len(e.dialer.log()) != before {
			t.Fatalf("a paused campaign dialed: %v", e.dialer.log()[before:])
		}
		e.transition(t, agentline.CampaignPaused, agentline.CampaignRunning)
		e.pass(t, 3*time.Second)
		if ct := e.contacts(t)["+14155551003"]; ct.Status != agentline.ContactFailed || ct.Attempts != 2 {
			t.Fatalf("after its last attempt: %+v", ct)
		}
		if c := e.campaign(t); c.Status != agentline.CampaignCompleted || c.Counts.Completed != 3 || c.Counts.Failed != 1 {
			t.Fatalf("campaign %+v", c)
		}
		if err := e.engine.Pass(context.Background(), e.project, e.c.ID, time.Second, nil); err != nil || errors.Is(err, context.Canceled) {
			t.Fatalf("a pass over a completed campaign: %v", err)
		}
	})
}

// A machine detection verdict whose own callback comes after the call's
// end (the carrier sends both at once; a loaded server takes them in
// either order) still makes the call a voicemail, retried, not a person
// reached: the final status callback carries AnsweredBy, and the end's
// settlement reads it. Before, the machine was counted completed.
func TestEngineSettlesAMachineWhoseVerdictComesAfterTheEnd(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEngineEnv(t, db, agentline.Campaign{CallingWindow: everyDay, MaxConcurrentCalls: 5, CallsPerSecond: 10,
			MaxAttempts: 2, RetryAfter: time.Hour, Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}}, time.Now())
		e.dialer.lateVerdict = true
		e.add(t, "+14155551007", "+14155551010")
		e.transition(t, agentline.CampaignDraft, agentline.CampaignRunning)
		e.pass(t, 5*time.Second)
		got := e.contacts(t)
		if ct := got["+14155551007"]; ct.Status != agentline.ContactPending || ct.Attempts != 1 {
			t.Errorf("machine: %s after %d attempts, want pending (a voicemail hung up on is retried)", ct.Status, ct.Attempts)
		}
		if ct := got["+14155551010"]; ct.Status != agentline.ContactCompleted {
			t.Errorf("person: %s, want completed", ct.Status)
		}
		calls, err := db.Calls(context.Background(), e.project, agentline.CallFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			if want, _ := byLastDigit(c.To); c.AnsweredBy == "" || c.Status != want {
				t.Errorf("call to %s: %s answered by %q", c.To, c.Status, c.AnsweredBy)
			}
		}
	})
}
