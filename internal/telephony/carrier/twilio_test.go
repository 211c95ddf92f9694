package carrier

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

func newTwilio(t *testing.T, f *twiliofake.Fake, token string, timeout time.Duration) *Twilio {
	t.Helper()
	c, err := NewTwilio(TwilioConfig{AccountSID: f.AccountSID(), AuthToken: token, BaseURL: f.URL(), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTwilioAgainstFake(t *testing.T) {
	f := twiliofake.New(twiliofake.Options{})
	defer f.Close()
	c := newTwilio(t, f, f.AuthToken(), 0)
	ctx := context.Background()

	list, err := c.AvailableNumbers(ctx, "212")
	if err != nil || len(list) != 10 || !strings.HasPrefix(list[0].PhoneNumber, "+1212") || !list[0].Capabilities.Voice || list[0].Region != "NY" {
		t.Fatalf("AvailableNumbers = %+v %v", list, err)
	}
	sid, err := c.BuyNumber(ctx, BuyRequest{PhoneNumber: list[0].PhoneNumber, VoiceURL: "https://bot.example.com/api/telephony/inbound", StatusCallbackURL: "https://bot.example.com/api/telephony/status"})
	if err != nil || !strings.HasPrefix(sid, "PN") {
		t.Fatalf("BuyNumber = %q %v", sid, err)
	}
	if n := f.Numbers(); len(n) != 1 || n[0].VoiceURL != "https://bot.example.com/api/telephony/inbound" || n[0].VoiceMethod != "POST" {
		t.Fatalf("fake numbers = %+v", n)
	}
	if found, err := c.FindNumber(ctx, list[0].PhoneNumber); err != nil || found != sid {
		t.Fatalf("FindNumber = %q %v, want %s", found, err, sid)
	}
	if _, err := c.FindNumber(ctx, list[1].PhoneNumber); !errors.Is(err, ErrNumberGone) {
		t.Fatalf("FindNumber of a number not bought: %v", err)
	}
	// Buying it again: the carrier's reason comes through.
	_, err = c.BuyNumber(ctx, BuyRequest{PhoneNumber: list[0].PhoneNumber})
	if agentline.ErrorCode(err) != agentline.ECarrier || !strings.Contains(agentline.ErrorMessage(err), "is not available") {
		t.Fatalf("second purchase: %v", err)
	}
	call, err := c.CreateCall(ctx, CallRequest{To: "+14155550111", From: list[0].PhoneNumber, TwiML: "<Response><Hangup/></Response>", StatusCallbackURL: "https://bot.example.com/api/telephony/status"})
	if err != nil || call.Status != "queued" {
		t.Fatalf("CreateCall = %+v %v", call, err)
	}
	if calls := f.Calls(); len(calls) != 1 || strings.Join(calls[0].StatusCallbackEvents, ",") != "initiated,ringing,answered,completed" {
		t.Fatalf("fake calls = %+v", calls)
	}
	if status, err := c.CallStatus(ctx, call.SID); err != nil || status != "queued" {
		t.Fatalf("CallStatus = %q %v", status, err)
	}
	// Hung up before it was answered, a call ends canceled; once answered,
	// completed.
	if status, err := c.HangUp(ctx, call.SID); err != nil || status != "canceled" {
		t.Fatalf("HangUp = %q %v", status, err)
	}
	if status, err := c.CallStatus(ctx, call.SID); err != nil || status != "canceled" {
		t.Fatalf("CallStatus after hang-up = %q %v", status, err)
	}
	answered, err := c.CreateCall(ctx, CallRequest{To: "+14155550112", From: list[0].PhoneNumber, TwiML: "<Response><Hangup/></Response>"})
	if err != nil {
		t.Fatal(err)
	}
	f.SetCallStatus(answered.SID, "in-progress")
	if status, err := c.HangUp(ctx, answered.SID); err != nil || status != "completed" {
		t.Fatalf("HangUp of an answered call = %q %v", status, err)
	}
	if _, err := c.CallStatus(ctx, "CA00000000000000000000000000000000"); !errors.Is(err, ErrCallGone) {
		t.Fatalf("CallStatus of an unknown call: %v", err)
	}
	if err := c.ReleaseNumber(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseNumber(ctx, sid); !errors.Is(err, ErrNumberGone) {
		t.Fatalf("second release: %v", err)
	}
}

func TestTwilioErrors(t *testing.T) {
	f := twiliofake.New(twiliofake.Options{})
	defer f.Close()
	ctx := context.Background()

	_, err := newTwilio(t, f, "wrongtoken", 0).AvailableNumbers(ctx, "")
	if agentline.ErrorCode(err) != agentline.ECarrier || !strings.Contains(agentline.ErrorMessage(err), "Authentication Error") {
		t.Fatalf("wrong token: %v", err)
	}

	f.FailNext(503, 20503, "Service Unavailable")
	_, err = newTwilio(t, f, f.AuthToken(), 0).AvailableNumbers(ctx, "")
	if agentline.ErrorCode(err) != agentline.ECarrier || !strings.Contains(agentline.ErrorMessage(err), "Service Unavailable") {
		t.Fatalf("carrier failure: %v", err)
	}

	hold := f.HoldNext()
	defer hold.Release()
	_, err = newTwilio(t, f, f.AuthToken(), 100*time.Millisecond).AvailableNumbers(ctx, "")
	if agentline.ErrorCode(err) != agentline.ECarrier || !strings.Contains(agentline.ErrorMessage(err), "did not answer in time") || !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("timeout: %v", err)
	}

	// A canceled request context stops the request too.
	hold2 := f.HoldNext()
	defer hold2.Release()
	cctx, cancel := context.WithCancel(ctx)
	go func() { <-hold2.Arrived(); cancel() }()
	if _, err := newTwilio(t, f, f.AuthToken(), 0).AvailableNumbers(cctx, ""); agentline.ErrorCode(err) != agentline.ECarrier || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
}

// FetchCall reads Twilio's Call resource as the fake answers it: a live
// call has no duration or end yet; an ended one has both, the duration
// given as a string of seconds and the end as an RFC 2822 time.
func TestFetchCall(t *testing.T) {
	f := twiliofake.New(twiliofake.Options{})
	defer f.Close()
	c := newTwilio(t, f, f.AuthToken(), 0)
	ctx := context.Background()
	sid := f.IncomingCall("+14155550111", "+14155550100")
	live, err := c.FetchCall(ctx, sid)
	if err != nil || live.Status != "in-progress" || live.DurationS != nil || !live.EndedAt.IsZero() {
		t.Fatalf("live call = %+v %v", live, err)
	}
	before := time.Now().Add(-time.Second)
	f.SetCallStatus(sid, "completed")
	ended, err := c.FetchCall(ctx, sid)
	if err != nil || ended.Status != "completed" || ended.DurationS == nil || *ended.DurationS < 0 || ended.EndedAt.Before(before) || ended.EndedAt.After(time.Now()) {
		t.Fatalf("ended call = %+v %v", ended, err)
	}
	if _, err := c.FetchCall(ctx, "CA00000000000000000000000000000000"); !errors.Is(err, ErrCallGone) {
		t.Fatalf("FetchCall of an unknown call: %v", err)
	}
}

// FindCalls lists the calls placed from a number to another since a time,
// as the fake answers GET Calls.json filtered by To and From: how the
// campaign engine finds a call whose SID it never heard.
func TestFindCalls(t *testing.T) {
	f := twiliofake.New(twiliofake.Options{})
	defer f.Close()
	c := newTwilio(t, f, f.AuthToken(), 0)
	ctx := context.Background()
	list, _ := c.AvailableNumbers(ctx, "415")
	from := list[0].PhoneNumber
	if _, err := c.BuyNumber(ctx, BuyRequest{PhoneNumber: from}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	var sids []string
	for _, to := range []string{"+14155550111", "+14155550112", "+14155550111"} {
		cc, err := c.CreateCall(ctx, CallRequest{To: to, From: from, TwiML: "<Response><Hangup/></Response>"})
		if err != nil {
			t.Fatal(err)
		}
		sids = append(sids, cc.SID)
	}
	f.SetCallStatus(sids[2], "busy")
	found, err := c.FindCalls(ctx, from, "+14155550111", before)
	if err != nil || len(found) != 2 || found[0].SID != sids[2] || found[1].SID != sids[0] || found[0].Status != "busy" ||
		found[0].EndedAt.IsZero() || found[1].Status != "queued" || found[1].Created.Before(before.Truncate(time.Second)) {
		t.Fatalf("FindCalls = %+v %v", found, err)
	}
	if found, err := c.FindCalls(ctx, from, "+14155550111", time.Now().Add(time.Hour)); err != nil || len(found) != 0 {
		t.Fatalf("FindCalls after the calls = %+v %v", found, err)
	}
	if found, err := c.FindCalls(ctx, "+14155550199", "+14155550111", before); err != nil || len(found) != 0 {
		t.Fatalf("FindCalls from another number = %+v %v", found, err)
	}
}
