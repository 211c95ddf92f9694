package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A call linked to a campaign's contact (as the dialing engine links it)
// reads back with its campaign, contact and variables, on its record and
// on its conversation; a call of no campaign has none.
func TestCampaignCallLinks(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newWidgetFixture(t, db)
		c := newCampaign(t, db, f.p1.ID, f.a1.ID, "Renewals")
		if _, _, _, err := db.AddContacts(ctx, f.p1.ID, c.ID, contacts("+14155550101"), 10); err != nil {
			t.Fatal(err)
		}
		list, _ := db.CampaignContacts(ctx, f.p1.ID, c.ID, "", 0, 10)
		var ids []int64
		for i := range 2 {
			call, err := db.ReserveCall(ctx, agentline.Call{ProjectID: f.p1.ID, AgentID: f.a1.ID, CallSID: fmt.Sprint("CAlink", i),
				Direction: agentline.CallOutbound, From: "+14155550100", To: "+14155550101", Status: agentline.CallQueued}, 10)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, call.ID)
		}
		mustExec(t, db, fmt.Sprintf(`UPDATE calls SET campaign_id = %d, contact_id = %d, variables = '{"first_name":"N0","plan":"Pro"}' WHERE id = %d`,
			c.ID, list[0].ID, ids[0]))
		call, err := db.Call(ctx, f.p1.ID, "CAlink0")
		if err != nil || call.CampaignID == nil || *call.CampaignID != c.ID || call.ContactID == nil || *call.ContactID != list[0].ID ||
			call.Variables["plan"] != "Pro" || call.Variables["first_name"] != "N0" {
			t.Fatalf("linked call %+v %v", call, err)
		}
		conv, err := db.Conversation(ctx, f.p1.ID, agentline.CallConversationID(ids[0]))
		if err != nil || conv.CampaignID == nil || *conv.CampaignID != c.ID || conv.ContactID == nil || conv.Variables["plan"] != "Pro" {
			t.Fatalf("linked conversation %+v %v", conv, err)
		}
		plain, err := db.Call(ctx, f.p1.ID, "CAlink1")
		if err != nil || plain.CampaignID != nil || plain.ContactID != nil || plain.Variables != nil {
			t.Fatalf("plain call %+v %v", plain, err)
		}
		conv, err = db.Conversation(ctx, f.p1.ID, agentline.CallConversationID(ids[1]))
		if err != nil || conv.CampaignID != nil || conv.Variables != nil {
			t.Fatalf("plain conversation %+v %v", conv, err)
		}
	})
}
