package config

// tracingFromEnv reports whether traces are exported: the standard
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
// Only the switch is read here; the OpenTelemetry SDK reads the rest of
// the standard OTEL_* variables itself (headers, sampler, service name),
// so they mean what every other OpenTelemetry program takes them to mean.
func tracingFromEnv(getenv func(string) string) bool {
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}
