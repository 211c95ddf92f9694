package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
)

// Turn latencies recorded on a call's log and reported on a widget
// session come back on the conversation: the summary, and each on the
// agent line answering its turn.
func TestConversationTurnLatency(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newConvFixture(t, db)
		lat := func(ms int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"latency_ms":%d}`, ms)) }
		if err := db.AddSessionEvents(ctx, f.p1.ID, f.widget, []agentline.SessionEvent{
			{Type: agentline.EventTurnLatency, At: f.t0.Add(3 * time.Second), Data: lat(420)},
		}, ended); err != nil {
			t.Fatal(err)
		}
		w, err := db.Conversation(ctx, f.p1.ID, f.widget)
		if err != nil {
			t.Fatal(err)
		}
		if w.Latency == nil || *w.Latency != (agentline.TurnLatency{P50MS: 420, P95MS: 420, MaxMS: 420, Turns: 1}) {
			t.Fatalf("widget latency = %+v", w.Latency)
		}
		last := w.Transcript[len(w.Transcript)-1]
		if last.Speaker != "agent" || last.LatencyMS == nil || *last.LatencyMS != 420 || w.Transcript[0].LatencyMS != nil {
			t.Fatalf("widget transcript = %+v", w.Transcript)
		}

		id, _ := agentline.ParseCallConversationID(f.call)
		var entries []agentline.CallLogEntry
		for i, ms := range []int{300, 310, 900} {
			at := f.t0.Add(time.Duration(70+10*i) * time.Second)
			entries = append(entries,
				agentline.CallLogEntry{Type: "transcript", Role: "caller", Text: "question", At: at},
				agentline.CallLogEntry{Type: agentline.EventTurnLatency, Data: lat(ms), At: at.Add(time.Second)},
				agentline.CallLogEntry{Type: "transcript", Role: "agent", Text: "answer", At: at.Add(2 * time.Second)})
		}
		if err := db.AppendCallLog(ctx, f.p1.ID, id, entries); err != nil {
			t.Fatal(err)
		}
		c, err := db.Conversation(ctx, f.p1.ID, f.call)
		if err != nil {
			t.Fatal(err)
		}
		if c.Latency == nil || *c.Latency != (agentline.TurnLatency{P50MS: 310, P95MS: 900, MaxMS: 900, Turns: 3}) {
			t.Fatalf("call latency = %+v", c.Latency)
		}
		var got []int64
		for _, l := range c.Transcript {
			if l.LatencyMS != nil {
				if l.Speaker != "agent" {
					t.Fatalf("latency on a %s line", l.Speaker)
				}
				got = append(got, *l.LatencyMS)
			}
		}
		if fmt.Sprint(got) != "[300 310 900]" {
			t.Fatalf("per-line latencies = %v", got)
		}
		samples, err := db.TurnLatencies(ctx, f.p1.ID, f.t0.Add(-time.Hour), f.t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, s := range samples {
			if s.AgentID != f.a1.ID || s.Day != f.t0.Format(time.DateOnly) {
				t.Fatalf("sample %+v", s)
			}
			sum += s.MS
		}
		if len(samples) != 4 || sum != 420+300+310+900 {
			t.Fatalf("samples = %+v", samples)
		}
	})
}
