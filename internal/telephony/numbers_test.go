package telephony_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

func TestAvailableNumbers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	path := fmt.Sprintf("/api/projects/%d/telephony/numbers/available", e.project)
	e.run([]check{
		{name: "viewer may search", token: e.viewer, method: "GET", path: path + "?area_code=212", status: 200, has: `"phone_number":"+12125550100"`},
		{name: "lower-case country", token: e.viewer, method: "GET", path: path + "?country=us", status: 200, has: `"region":"CA"`},
		{name: "other country", token: e.owner, method: "GET", path: path + "?country=GB", status: 400, code: "invalid_request", has: "only US local numbers are supported"},
		{name: "two-digit area code", token: e.owner, method: "GET", path: path + "?area_code=41", status: 400, code: "invalid_request", has: "three digits"},
		{name: "letters in area code", token: e.owner, method: "GET", path: path + "?area_code=4a5", status: 400, code: "invalid_request"},
		{name: "outsider", token: e.outsider, method: "GET", path: path, status: 404, code: "not_found"},
		{name: "no session", method: "GET", path: path, status: 401, code: "unauthorized"},
		{name: "bad project id", token: e.owner, method: "GET", path: "/api/projects/abc/telephony/numbers/available", status: 404},
	})
	var items []map[string]any
	res := e.do(e.viewer, "GET", path+"?area_code=415", nil)
	res.json(&items)
	if len(items) != 10 {
		t.Fatalf("items = %d", len(items))
	}
	for _, k := range []string{"phone_number", "friendly_name", "locality", "region", "postal_code", "capabilities"} {
		if _, ok := items[0][k]; !ok {
			t.Errorf("item has no %s: %v", k, items[0])
		}
	}
	e.fake.FailNext(500, 20500, "Internal Server Error at the carrier")
	e.run([]check{{name: "carrier failure", token: e.owner, method: "GET", path: path, status: 502, code: "carrier_error", has: "Internal Server Error at the carrier"}})
}

func TestProvisionNumber(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	path := fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project)
	body := func(phone string, agent int64) map[string]any {
		return map[string]any{"phone_number": phone, "agent_id": agent}
	}

	res := e.do(e.editor, "POST", path, body("+14155550100", e.ada))
	if res.status != 201 {
		t.Fatalf("provision: %d %s", res.status, res.body)
	}
	var n agentline.PhoneNumber
	res.json(&n)
	if n.ID == 0 || n.PhoneNumber != "+14155550100" || n.AgentID == nil || *n.AgentID != e.ada || n.Status != "active" || !strings.HasPrefix(n.CarrierSID, "PN") || n.CreatedAt.IsZero() {
		t.Fatalf("number = %+v", n)
	}
	bought := e.fake.Numbers()
	if len(bought) != 1 || bought[0].SID != n.CarrierSID || bought[0].VoiceURL != "https://"+botHost+"/api/telephony/inbound" ||
		bought[0].VoiceMethod != "POST" || bought[0].StatusCallback != "https://"+botHost+"/api/telephony/status" {
		t.Fatalf("bought = %+v", bought)
	}

	e.run([]check{
		{name: "viewer may not provision", token: e.viewer, method: "POST", path: path, body: body("+14155550101", e.bob), status: 403, code: "forbidden"},
		{name: "outsider", token: e.outsider, method: "POST", path: path, body: body("+14155550101", e.bob), status: 404, code: "not_found"},
		{name: "outsider into own project with our agent", token: e.outsider, method: "POST", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e.otherProject), body: body("+14155550101", e.bob), status: 400, has: "not in this project"},
		{name: "not E.164", token: e.owner, method: "POST", path: path, body: body("4155550101", e.bob), status: 400, code: "invalid_request", has: "E.164"},
		{name: "not US", token: e.owner, method: "POST", path: path, body: body("+442071838750", e.bob), status: 400, code: "invalid_request", has: "only US local numbers"},
		{name: "no agent", token: e.owner, method: "POST", path: path, body: map[string]any{"phone_number": "+14155550101"}, status: 400, has: "agent_id is required"},
		{name: "agent of another project", token: e.owner, method: "POST", path: path, body: body("+14155550101", e.eve), status: 400, has: "not in this project"},
		{name: "agent already has a number", token: e.owner, method: "POST", path: path, body: body("+14155550101", e.ada), status: 409, code: "conflict", has: "release it first"},
		{name: "number already provisioned", token: e.owner, method: "POST", path: path, body: body("+14155550100", e.bob), status: 409, code: "conflict", has: "already provisioned"},
		{name: "unknown field", token: e.owner, method: "POST", path: path, body: `{"phone_number":"+14155550101","agent_id":1,"color":"red"}`, status: 400, has: "color"},
		{name: "malformed JSON", token: e.owner, method: "POST", path: path, body: `{"phone_number":`, status: 400},
		{name: "wrong type", token: e.owner, method: "POST", path: path, body: `{"phone_number":4155550101,"agent_id":1}`, status: 400, has: "phone_number"},
	})
	if got := len(e.fake.Numbers()); got != 1 {
		t.Fatalf("refused requests bought numbers: %d owned", got)
	}

	// The carrier refuses: its reason is shown and nothing is stored.
	e.fake.FailNext(400, 21422, "PhoneNumber +14155550101 is not available")
	e.run([]check{{name: "carrier refuses", token: e.owner, method: "POST", path: path, body: body("+14155550101", e.bob), status: 502, code: "carrier_error", has: "is not available"}})
	var list []agentline.PhoneNumber
	e.do(e.viewer, "GET", path, nil).json(&list)
	if len(list) != 1 || len(e.fake.Numbers()) != 1 {
		t.Fatalf("after carrier failure: stored %d, bought %d", len(list), len(e.fake.Numbers()))
	}
}

// A purchase followed by a database failure leaves no number bought: while
// the carrier sells the number, another request stores the same number, so
// the insert fails and the handler releases what it bought.
func TestProvisionReleasesWhenStoringFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	hold := e.fake.HoldNext()
	done := make(chan response, 1)
	go func() {
		done <- e.do(e.owner, "POST", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), map[string]any{"phone_number": "+14155550100", "agent_id": e.ada})
	}()
	<-hold.Arrived()
	if _, err := e.app.Store.CreatePhoneNumber(context.Background(), agentline.PhoneNumber{
		ProjectID: e.otherProject, PhoneNumber: "+14155550100", Status: agentline.NumberUnassigned, CarrierSID: "PNelsewhere",
	}); err != nil {
		t.Fatal(err)
	}
	hold.Release()
	res := <-done
	if res.status != 409 || res.errorCode() != "conflict" {
		t.Fatalf("provision = %d %s", res.status, res.body)
	}
	if owned := e.fake.Numbers(); len(owned) != 0 {
		t.Fatalf("numbers still bought at the carrier: %+v", owned)
	}
	if released := e.fake.Released(); len(released) != 1 || released[0].PhoneNumber != "+14155550100" {
		t.Fatalf("released = %+v", released)
	}
}

func TestNumberLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	n := e.provision("+14155550100", e.ada)
	list := fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project)
	one := fmt.Sprintf("%s/%d", list, n.ID)
	foreign := fmt.Sprintf("/api/projects/%d/telephony/numbers/%d", e.otherProject, n.ID)

	e.run([]check{
		{name: "viewer lists", token: e.viewer, method: "GET", path: list, status: 200, has: `"status":"active"`},
		{name: "outsider lists", token: e.outsider, method: "GET", path: list, status: 404},
		{name: "outsider lists own project", token: e.outsider, method: "GET", path: fmt.Sprintf("/api/projects/%d/telephony/numbers", e.otherProject), status: 200, has: "[]"},

		{name: "viewer may not suspend", token: e.viewer, method: "PATCH", path: one, body: map[string]any{"status": "suspended"}, status: 403},
		{name: "outsider suspends", token: e.outsider, method: "PATCH", path: one, body: map[string]any{"status": "suspended"}, status: 404},
		{name: "outsider suspends through own project", token: e.outsider, method: "PATCH", path: foreign, body: map[string]any{"status": "suspended"}, status: 404},
		{name: "suspend", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "suspended"}, status: 200, has: `"status":"suspended"`},
		{name: "back to active", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "active"}, status: 200, has: `"status":"active"`},
		{name: "bad status", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "gone"}, status: 400, has: "status must be"},
		{name: "nothing to change", token: e.editor, method: "PATCH", path: one, body: map[string]any{}, status: 400},
		{name: "unassign and link at once", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "unassigned", "agent_id": e.bob}, status: 400},
		{name: "link a gemini agent", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.gemini}, status: 200, has: fmt.Sprintf(`"agent_id":%d`, e.gemini)},
		{name: "link another tenant's agent", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.eve}, status: 400, has: "not in this project"},
		{name: "unlink", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "unassigned"}, status: 200, has: `"agent_id":null,"status":"unassigned"`},
		{name: "activate without agent", token: e.editor, method: "PATCH", path: one, body: map[string]any{"status": "active"}, status: 400, has: "no agent"},
		{name: "relink to bob, suspended", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.bob, "status": "suspended"}, status: 200, has: fmt.Sprintf(`"agent_id":%d,"status":"suspended"`, e.bob)},
		{name: "relink to ada", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.ada}, status: 200, has: fmt.Sprintf(`"agent_id":%d,"status":"active"`, e.ada)},
		{name: "missing number", token: e.editor, method: "PATCH", path: list + "/999999", body: map[string]any{"status": "suspended"}, status: 404},
	})
	second := e.provision("+14155550101", e.bob)
	e.run([]check{
		{name: "agent keeps one number", token: e.editor, method: "PATCH", path: one, body: map[string]any{"agent_id": e.bob}, status: 409, has: "+14155550101"},
		{name: "editor may not release", token: e.editor, method: "DELETE", path: one, status: 403},
		{name: "outsider releases", token: e.outsider, method: "DELETE", path: foreign, status: 404},
	})

	// The carrier fails: the record stays.
	e.fake.FailNext(500, 20500, "carrier is down")
	e.run([]check{{name: "carrier failure on release", token: e.owner, method: "DELETE", path: one, status: 502, code: "carrier_error", has: "carrier is down"}})
	e.run([]check{
		{name: "release", token: e.owner, method: "DELETE", path: one, status: 204},
		{name: "released number is gone", token: e.owner, method: "DELETE", path: one, status: 404},
	})
	if r := e.fake.Released(); len(r) != 1 || r[0].SID != n.CarrierSID {
		t.Fatalf("released at carrier = %+v", r)
	}
	// A number the carrier no longer has still loses its record.
	e.fake.FailNext(404, 20404, "The requested resource was not found")
	e.run([]check{{name: "release a number gone at the carrier", token: e.owner, method: "DELETE", path: fmt.Sprintf("%s/%d", list, second.ID), status: 204}})
	var left []agentline.PhoneNumber
	e.do(e.owner, "GET", list, nil).json(&left)
	if len(left) != 0 {
		t.Fatalf("numbers left = %+v", left)
	}
}

func TestDeletingAnAgentUnassignsItsNumber(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	n := e.provision("+14155550100", e.bob)
	e.run([]check{{name: "delete agent", token: e.owner, method: "DELETE", path: fmt.Sprintf("/api/agents/%d", e.bob), status: 204}})
	var list []agentline.PhoneNumber
	e.do(e.owner, "GET", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), nil).json(&list)
	if len(list) != 1 || list[0].ID != n.ID || list[0].AgentID != nil || list[0].Status != agentline.NumberUnassigned {
		t.Fatalf("numbers = %+v", list)
	}
	if len(e.fake.Numbers()) != 1 {
		t.Fatal("the number must stay owned until it is released")
	}
}

// TestProvisionCarrierTimeout: a purchase whose answer never comes may have
// been made at the carrier anyway; the number is looked up there and
// released, so nothing is billed without a record, and the answer is 502.
func TestProvisionCarrierTimeout(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		arrange  func(f *twiliofake.Fake) func()
		released int
		message  string
	}{
		{"sold, answer lost", func(f *twiliofake.Fake) func() { f.AnswerLateNext(3 * time.Second); return func() {} }, 1, "released again"},
		{"not sold", func(f *twiliofake.Fake) func() { return f.HoldNext().Release }, 0, "nothing is billed"},
		{"lookup fails too", func(f *twiliofake.Fake) func() {
			h := f.HoldNext()
			f.FailNext(500, 20500, "held request") // taken by the held purchase
			f.FailNext(500, 20500, "lookup down")
			return h.Release
		}, 0, "check your Twilio console"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, map[string]string{"TWILIO_TIMEOUT": "300ms"})
			defer tc.arrange(e.fake)()
			res := e.do(e.owner, "POST", fmt.Sprintf("/api/projects/%d/telephony/numbers", e.project), map[string]any{"phone_number": "+14155550100", "agent_id": e.ada})
			if res.status != 502 || res.errorCode() != "carrier_error" || !strings.Contains(string(res.body), tc.message) {
				t.Fatalf("provision = %d %s", res.status, res.body)
			}
			if owned := e.fake.Numbers(); len(owned) != 0 {
				t.Fatalf("a number is left bought at the carrier: %+v", owned)
			}
			if released := e.fake.Released(); len(released) != tc.released {
				t.Fatalf("released = %+v, want %d", released, tc.released)
			}
			if list, _ := e.app.Store.PhoneNumbers(context.Background(), e.project); len(list) != 0 {
				t.Fatalf("records: %+v", list)
			}
		})
	}
}
