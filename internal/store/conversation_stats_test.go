package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// The analytics sums match the records, on both dialects.
func TestConversationStats(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newConvFixture(t, db)
		from, to := f.t0.Add(-time.Hour), time.Now().Add(time.Hour)
		stats, err := db.ConversationStats(ctx, f.p1.ID, from, to)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int64{}
		var ms, tools, toolErrs int64
		for _, s := range stats {
			kinds[s.Kind] += s.Conversations
			ms += s.DurationMS
			tools += s.ToolCalls
			toolErrs += s.ToolErrors
		}
		if kinds["widget"] != 1 || kinds["live_chat"] != 1 || kinds["phone"] != 1 || ms != 90000+42000 || tools != 3 || toolErrs != 1 {
			t.Fatalf("stats = %+v", stats)
		}
		leads, err := db.LeadStats(ctx, f.p1.ID, from, to)
		if err != nil || len(leads) != 1 || leads[0].Leads != 1 {
			t.Fatalf("leads = %+v %v", leads, err)
		}
	})
}
