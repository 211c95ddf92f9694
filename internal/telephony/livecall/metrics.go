package livecall

import "github.com/prometheus/client_golang/prometheus"

// metrics of the phone relay.
type metrics struct {
	active       prometheus.Gauge
	duration     prometheus.Histogram
	frameLatency prometheus.Histogram
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
	}
	if reg != nil {
		reg.MustRegister(m.active, m.duration, m.frameLatency)
	}
	return m
}
