// Package otlptest is an OTLP/HTTP trace receiver on loopback for tests
// and benchmarks: it decodes the exporter's real protobuf requests
// (collector/trace/v1.ExportTraceServiceRequest) and keeps their spans.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, its ids in hex ("" for no parent).
type Span struct {
	Name                  string
	TraceID, ID, ParentID string
	Kind                  int32
	// Attrs are the span's attributes, their values as text.
	Attrs map[string]string
	// Service is the service.name of the span's resource.
	Service string
}

// Receiver is a running OTLP/HTTP receiver. Its URL is what
// OTEL_EXPORTER_OTLP_ENDPOINT takes.
type Receiver struct {
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	errs     []error
}

// New starts a receiver; Close stops it.
func New() *Receiver {
	r := &Receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.export)
	r.srv = httptest.NewServer(mux)
	r.URL = r.srv.URL
	return r
}

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests is the number of export requests received, and the errors of
// those that could not be decoded.
func (r *Receiver) Requests() (int, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, append([]error(nil), r.errs...)
}

func (r *Receiver) export(w http.ResponseWriter, req *http.Request) {
	spans, err := decode(req)
	r.mu.Lock()
	r.requests++
	if err != nil {
		r.errs = append(r.errs, err)
	}
	r.spans = append(r.spans, spans...)
	r.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Write(b)
}

func decode(req *http.Request) ([]Span, error) {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		return nil, fmt.Errorf("content type %q, want application/x-protobuf", ct)
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &msg); err != nil {
		return nil, fmt.Errorf("decode ExportTraceServiceRequest: %w", err)
	}
	var out []Span
	for _, rs := range msg.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				out = append(out, Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
					ID: hex.EncodeToString(s.GetSpanId()), ParentID: hex.EncodeToString(s.GetParentSpanId()),
					Kind: int32(s.GetKind()), Attrs: attrs(s.GetAttributes()), Service: service})
			}
		}
	}
	return out, nil
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = fmt.Sprint(x.IntValue)
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = fmt.Sprint(x.BoolValue)
		default:
			m[kv.GetKey()] = fmt.Sprint(v)
		}
	}
	return m
}
