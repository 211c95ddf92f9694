package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/campaign"
	"github.com/agentline/agentline/internal/jobs"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// Two instances on PostgreSQL share a running campaign of 120 contacts
// (persons, busy lines, unanswered phones and answering machines, by the
// sandbox's last-digit rule), calling through one carrier (twiliofake,
// whose webhooks reach whichever instance is alive). One instance is
// killed with SIGKILL mid-campaign, with calls of its own in flight, and
// not restarted: its DialCampaign job is held until the job queue rescues
// it, its calls' callbacks go to the other, and the dials it left between
// a claim and the carrier's answer are recovered. The campaign completes
// with the counts the last digits give, nobody left behind, and, by the
// carrier's own log, no contact dialed
// twice (every person called exactly once, and no contact called more
// often than its attempts that reached the carrier) and never more calls
// created in one second than calls_per_second, across both instances. Around the kill, the
// carrier answers one request too late and holds another, so that dials
// are left between their claim and the carrier's answer, which recovery
// settles with the carrier's list of calls.
func TestCampaignSurvivesAKilledInstance(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t, store.Postgres)
	f := startFakes(t)
	var live liveInstances
	proxy := httptest.NewServer(&live)
	t.Cleanup(proxy.Close)
	carrier := twiliofake.New(twiliofake.Options{AuthToken: carrierToken, Play: &twiliofake.Play{Server: proxy.URL,
		Ring: 300 * time.Millisecond, NoAnswer: time.Second, Answer: func(ctx context.Context, c twiliofake.Call) error {
			select { // a callee who talks for three seconds, with no stream: no model takes part
			case <-ctx.Done():
			case <-time.After(3 * time.Second):
			}
			return nil
		}}})
	t.Cleanup(carrier.Close)
	env := f.env(dbURL, "")
	env["TWILIO_ACCOUNT_SID"], env["TWILIO_API_BASE_URL"], env["TWILIO_TIMEOUT"] = carrier.AccountSID(), carrier.URL(), "3s"
	env["AGENTLINE_JOB_RESCUE_AFTER"], env["AGENTLINE_CALL_RECONCILE_AFTER"] = "15s", "5s"
	env["AGENTLINE_MAX_CONCURRENT_CALLS"] = "100"
	a, b := start(t, "a", env), start(t, "b", env)
	live.set(a, b)
	tok := a.Login(t, ownerEmail, ownerPassword)
	var p agentline.Project
	var agent agentline.Agent
	a.Must(t, 201, "POST", "/api/projects", tok, map[string]string{"name": "Shop"}, &p)
	a.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/agents", tok, map[string]string{"name": "Ada", "model": "gpt-realtime"}, &agent)
	a.Must(t, 201, "POST", "/api/projects/"+itoa(p.ID)+"/telephony/numbers", tok, map[string]any{"phone_number": "+14155550100", "agent_id": agent.ID}, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	db := openDB(t, ctx, dbURL)
	connectOutbox(t, db)
	const n = 120
	c, err := db.CreateCampaign(ctx, agentline.Campaign{ProjectID: p.ID, AgentID: agent.ID, Name: "Renewals",
		CallingWindow:      agentline.CallingWindow{Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Start: "00:00", End: "24:00"},
		MaxConcurrentCalls: 12, CallsPerSecond: 8, MaxAttempts: 2, RetryAfter: time.Second,
		Voicemail: agentline.Voicemail{Action: agentline.VoicemailHangUp}})
	if err != nil {
		t.Fatal(err)
	}
	var cs []agentline.CampaignContact
	for i := range n {
		cs = append(cs, agentline.CampaignContact{PhoneNumber: fmt.Sprintf("+1415556%04d", i), Timezone: "America/Los_Angeles"})
	}
	if _, _, _, err := db.AddContacts(ctx, p.ID, c.ID, cs, n); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.TransitionCampaign(ctx, p.ID, c.ID, []string{agentline.CampaignDraft}, agentline.CampaignRunning); err != nil || !ok {
		t.Fatalf("start: %v %v", ok, err)
	}

	// Kill b once it has placed calls and a third of the contacts are done.
	waitFor(t, 2*time.Minute, "b placing calls mid-campaign", func() bool {
		got, err := db.Campaign(ctx, p.ID, c.ID)
		return err == nil && placedBy(t, b) >= 3 && got.Counts.Pending+got.Counts.Calling < 2*n/3
	})
	// The carrier makes the next call but its answer never arrives (the
	// instance's request times out), and holds the one after until after
	// the kill: whichever instance sent them, a dial is left between its
	// claim and the carrier's answer, for recovery.
	sent := len(carrier.Requests())
	carrier.AnswerLateNext(6 * time.Second)
	waitFor(t, 30*time.Second, "a request answered late", func() bool { return len(carrier.Requests()) > sent })
	hold := carrier.HoldNext()
	select {
	case <-hold.Arrived():
	case <-time.After(30 * time.Second):
		t.Fatal("no request to hold")
	}
	defer time.AfterFunc(5*time.Second, hold.Release).Stop()
	requests := carrier.Requests()
	t.Logf("answered late: %s; held: %s", requests[sent], requests[len(requests)-1])
	before, _ := db.Campaign(ctx, p.ID, c.ID)
	b.signal(t, syscall.SIGKILL)
	b.wait(t, 10*time.Second)
	live.set(a)
	t.Logf("killed b after it placed %d calls; counts then %+v", placedBy(t, b), before.Counts)
	took := waitFor(t, 3*time.Minute, "the campaign completed on a alone", func() bool {
		got, err := db.Campaign(ctx, p.ID, c.ID)
		return err == nil && got.Status == agentline.CampaignCompleted
	})
	want := agentline.CampaignCounts{}
	for _, ct := range cs {
		switch twiliofake.ByLastDigit(ct.PhoneNumber) {
		case twiliofake.PickupMachine:
			want.Add(agentline.ContactVoicemail, 1)
		case twiliofake.PickupBusy:
			want.Add(agentline.ContactBusy, 1)
		case twiliofake.PickupNoAnswer:
			want.Add(agentline.ContactNoAnswer, 1)
		default:
			want.Add(agentline.ContactCompleted, 1)
		}
	}
	if got, _ := db.Campaign(ctx, p.ID, c.ID); got.Counts != want {
		t.Errorf("counts %+v, want %+v", got.Counts, want)
	}
	recovered := checkNoDoubleDials(t, ctx, db, p.ID, c.ID, carrier)
	checkPace(t, carrier, int(c.CallsPerSecond))
	if strings.HasPrefix(requests[sent], "POST ") && recovered == 0 {
		t.Error("the call whose answer never arrived was not recovered")
	}
	t.Logf("completed %v after the kill", took.Round(time.Second))
}

// liveInstances forwards the carrier's webhooks to the first instance that
// takes them, as a load balancer in front of the instances would.
type liveInstances struct {
	mu  sync.Mutex
	all []*instance
}

func (l *liveInstances) set(is ...*instance) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = is
}

func (l *liveInstances) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	all := l.all
	l.mu.Unlock()
	for _, i := range all {
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, i.URL+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		defer res.Body.Close()
		w.WriteHeader(res.StatusCode)
		io.Copy(w, res.Body)
		return
	}
	http.Error(w, "no instance", http.StatusBadGateway)
}

// placedBy counts the outbound calls instance i logged placing.
func placedBy(t *testing.T, i *instance) int {
	t.Helper()
	log, err := os.ReadFile(i.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(log), `"placed an outbound call"`)
}

// connectOutbox lets db's writes enqueue jobs (the campaign's start) for
// the instances to run, through a queue that runs nothing itself.
func connectOutbox(t *testing.T, db *store.DB) {
	t.Helper()
	r := jobs.NewRegistry()
	jobs.AddCoalescingByArgs(r, campaign.NewEngine(campaign.EngineOptions{Store: db}), 10)
	q, err := jobs.New(jobs.Options{Pool: db.JobPool(), Dialect: string(db.Dialect())}, r)
	if err != nil {
		t.Fatal(err)
	}
	db.SetOutbox(store.OutboxOptions{Enqueue: q.EnqueueTx})
}

// checkNoDoubleDials checks the completed campaign against the carrier's
// log: nobody pending or calling, every dial settled, every person called
// once, and no contact called by the carrier more often than it has dials
// whose call the carrier got. It returns how many dials recovery settled.
func checkNoDoubleDials(t *testing.T, ctx context.Context, db *store.DB, projectID, campaignID int64, carrier *twiliofake.Fake) (recovered int) {
	t.Helper()
	got, err := db.Campaign(ctx, projectID, campaignID)
	if err != nil || got.Counts.Pending+got.Counts.Calling != 0 {
		t.Fatalf("left behind: %+v %v", got.Counts, err)
	}
	byNumber := map[string]int{}
	for _, c := range carrier.Calls() {
		byNumber[c.To]++
	}
	list, err := db.CampaignContacts(ctx, projectID, campaignID, "", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	records, err := db.Calls(ctx, projectID, agentline.CallFilter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	calls := map[int64]agentline.Call{}
	for _, c := range records {
		calls[c.ID] = c
	}
	twice, reconciled, notPlaced := 0, 0, 0
	for _, ct := range list {
		reached := 0
		for _, d := range ct.Dials {
			if d.Outcome == "" {
				t.Errorf("%s: dial %d has no outcome", ct.PhoneNumber, d.Attempt)
			}
			switch {
			case d.CallID == nil:
				notPlaced++
			case calls[*d.CallID].EndReason == campaign.EndReasonNotPlaced:
				notPlaced++
			case calls[*d.CallID].EndReason == agentline.EndReasonReconciled:
				reconciled++
				reached++
			default:
				reached++
			}
		}
		if byNumber[ct.PhoneNumber] != reached || ct.Status == agentline.ContactCompleted && reached != 1 {
			twice++
			t.Errorf("%s (%s): the carrier placed %d calls for %d dials that reached it", ct.PhoneNumber, ct.Status, byNumber[ct.PhoneNumber], reached)
		}
	}
	t.Logf("%d contacts %+v; %d calls at the carrier; dials recovered: %d found at the carrier, %d never placed; %d contacts dialed twice",
		len(list), got.Counts, len(carrier.Calls()), reconciled, notPlaced, twice)
	return reconciled + notPlaced
}

// checkPace checks the carrier's log of the campaign's calls: never more
// created in any one second ([t, t+1s)) than calls_per_second, whichever
// instance sent them.
func checkPace(t *testing.T, carrier *twiliofake.Fake, cps int) {
	t.Helper()
	var times []time.Time
	for _, c := range carrier.Calls() {
		times = append(times, c.Created)
	}
	slices.SortFunc(times, time.Time.Compare)
	peak := 0
	for i, j := 0, 0; j < len(times); j++ {
		for times[j].Sub(times[i]) >= time.Second {
			i++
		}
		peak = max(peak, j-i+1)
	}
	if peak > cps {
		t.Errorf("the carrier's log has %d calls created within one second; calls_per_second is %d", peak, cps)
	}
	t.Logf("the carrier's log: at most %d calls created in any second (calls_per_second %d)", peak, cps)
}
