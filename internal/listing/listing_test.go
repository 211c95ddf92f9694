package listing_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/listing"
)

func TestFilter(t *testing.T) {
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		query   string
		want    agentline.SessionFilter
		wantBad string // the field named by the error
	}{
		{"", agentline.SessionFilter{Limit: 50}, ""},
		{"channel_id=3&agent_id=4&from=2026-03-01&to=2026-03-01T00:00:00Z&limit=200&offset=7",
			agentline.SessionFilter{ChannelID: 3, AgentID: 4, From: day, To: day, Limit: 200, Offset: 7}, ""},
		{"channel_id=0", agentline.SessionFilter{}, "channel_id"},
		{"agent_id=x", agentline.SessionFilter{}, "agent_id"},
		{"from=yesterday", agentline.SessionFilter{}, "from"},
		{"to=2026-13-01", agentline.SessionFilter{}, "to"},
		{"limit=0", agentline.SessionFilter{}, "limit"},
		{"limit=201", agentline.SessionFilter{}, "limit"},
		{"offset=-1", agentline.SessionFilter{}, "offset"},
		{"offset=1000001", agentline.SessionFilter{}, "offset"},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		got, err := listing.Filter(q)
		if tt.wantBad != "" {
			if e, ok := err.(*agentline.Error); !ok || e.Code != agentline.EInvalid || e.Field != tt.wantBad {
				t.Errorf("%q: err = %v, want invalid %s", tt.query, err, tt.wantBad)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v", tt.query, got, err, tt.want)
		}
	}
}

func TestPage(t *testing.T) {
	list := []int{1, 2, 3}
	// Read with one more than the 2 asked: a next page at offset 10+2.
	got, next := listing.Page(list, agentline.SessionFilter{Limit: 3, Offset: 10})
	if len(got) != 2 || next == nil || *next != 12 {
		t.Errorf("full page: got %v, next %v", got, next)
	}
	got, next = listing.Page(list[:2], agentline.SessionFilter{Limit: 3, Offset: 10})
	if len(got) != 2 || next != nil {
		t.Errorf("last page: got %v, next %v", got, next)
	}
}
