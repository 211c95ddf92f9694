package livecall

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentline/agentline"
)

// metrics of the phone relay.
type metrics struct {
	active       prometheus.Gauge
	duration     prometheus.Histogram
	frameLatency prometheus.Histogram
	turnLatency  prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentline_phone_active_calls", Help: "Phone calls relayed by this instance now.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agentline_phone_call_duration_seconds", Help: "Duration of relayed phone calls.",
			Buckets: []float64{5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600},
		}),
		frameLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agentline_phone_frame_latency_seconds", Help: "Time a caller audio frame spends in the relay, from read to written to the model.",
			Buckets: []float64{0.00002, 0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05},
		}),
		// The widget registers the same name with channel "widget".
		turnLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "agentline_turn_latency_seconds", Help: "Time from the end of the caller's or visitor's speech to the first audio of the agent's answer.",
			ConstLabels: prometheus.Labels{"channel": "phone"}, Buckets: agentline.TurnLatencyBuckets(),
		}),
	}
	if reg != nil {
		reg.MustRegister(m.active, m.duration, m.frameLatency, m.turnLatency)
	}
	return m
}
