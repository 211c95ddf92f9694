// Package httpx is agentline's HTTP edge: handlers that return errors, the
// one JSON error shape, strict JSON decoding, and the middleware every route
// runs behind (request id, body limit, recovery, access log, metrics).
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentline/agentline"
)

// HandlerFunc is a handler that returns its error instead of writing it.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP writes the returned error in the JSON error shape.
func (fn HandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := fn(w, r); err != nil {
		WriteError(w, r, err)
	}
}

// statusByCode is the one table from error codes to HTTP statuses.
var statusByCode = map[string]int{
	agentline.EInvalid:             http.StatusBadRequest,
	agentline.EUnsupportedProvider: http.StatusBadRequest,
	agentline.EUnauthorized:        http.StatusUnauthorized,
	agentline.EInvalidKey:          http.StatusUnauthorized,
	agentline.EOriginNotAllowed:    http.StatusUnauthorized,
	agentline.EForbidden:           http.StatusForbidden,
	agentline.ENotFound:            http.StatusNotFound,
	agentline.EMethodNotAllowed:    http.StatusMethodNotAllowed,
	agentline.EConflict:            http.StatusConflict,
	agentline.ETooLarge:            http.StatusRequestEntityTooLarge,
	agentline.ERateLimited:         http.StatusTooManyRequests,
	agentline.EProvider:            http.StatusBadGateway,
	agentline.ECarrier:             http.StatusBadGateway,
	agentline.ENotConfigured:       http.StatusServiceUnavailable,
	agentline.EUnavailable:         http.StatusServiceUnavailable,
	agentline.EInternal:            http.StatusInternalServerError,
}

// Status returns the HTTP status for an error code.
func Status(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON shape of every error answer.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// Fields gives each field at fault its problem, when there are several.
	Fields map[string]string `json:"fields,omitempty"`
}

// WriteError answers with err in the JSON error shape. Internal errors are
// logged with the request's logger and answered with a generic message;
// errors that mean the database is unreachable answer 503 unavailable with
// Retry-After.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	err = Classify(err)
	code := agentline.ErrorCode(err)
	status := Status(code)
	detail := ErrorDetail{Code: code, Message: agentline.ErrorMessage(err)}
	var e *agentline.Error
	if errors.As(err, &e) {
		detail.Field, detail.Fields = e.Field, e.Fields
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
	}
	if status >= 500 {
		Logger(r.Context()).Error("request failed", "status", status, "err", err)
	} else if errors.Is(err, context.Canceled) {
		Logger(r.Context()).Debug("request canceled", "err", err)
	}
	WriteJSON(w, status, ErrorBody{detail})
}

// Classify returns err as WriteError answers it: a body over the limit is
// too_large, one that arrives too slowly invalid_request. (An unreachable database already arrives as unavailable: the
// store classifies its own errors.) Handlers that answer with HTML pages use
// it to pick their page.
func Classify(err error) error {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return &agentline.Error{Code: agentline.ETooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", maxErr.Limit), Err: err}
	}
	var slow *slowBodyError
	if errors.As(err, &slow) && agentline.ErrorCode(err) == agentline.EInternal {
		return &agentline.Error{Code: agentline.EInvalid, Message: slow.Error() + "; send it at once", Err: err}
	}
	return err
}

// WriteJSON answers with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"internal error"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// NoContent answers 204.
func NoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// Decode reads one JSON object from the body into v, whatever the
// Content-Type says (the API takes only JSON; tokens, not cookies, carry
// authority, so there is no form-posting risk to guard). Unknown fields,
// malformed JSON, wrong types, trailing data and an empty body are
// invalid_request errors naming the problem; an oversized body is too_large.
func Decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if berr := bodyError(err); berr != nil {
			return berr
		}
		return agentline.Invalid("", "request body must hold a single JSON value")
	}
	return nil
}

// bodyError is the answer to a body that could not be read whole: too
// large, or too slow to arrive; nil for any other error.
func bodyError(err error) error {
	var maxErr *http.MaxBytesError
	var slow *slowBodyError
	switch {
	case errors.As(err, &maxErr):
		return err
	case errors.As(err, &slow):
		return Classify(err)
	}
	return nil
}

func decodeError(err error) error {
	if berr := bodyError(err); berr != nil {
		return berr
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return agentline.Invalid("", "request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return agentline.Invalid("", "request body ends in the middle of a JSON value")
	case errors.As(err, &syntax):
		return agentline.Invalid("", "malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return agentline.Invalid("", "request body must be %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value)
		}
		return agentline.Invalid(typ.Field, "field %s must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return agentline.Invalid(name, "unknown field %q", name)
	}
	return agentline.Invalid("", "invalid JSON: %v", err)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return goKind
}

// PathID parses the integer id in the path segment name, or returns a
// not_found error: a malformed id names nothing that exists.
func PathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, agentline.Errorf(agentline.ENotFound, "%s %.40q not found", strings.TrimSuffix(name, "_id"), r.PathValue(name))
	}
	return id, nil
}

type loggerKey struct{}

type requestIDKey struct{}

// RequestID is the id the edge gave the request (its X-Request-Id), or ""
// outside the edge: code that logs with its own logger adds it, so that a
// generic answer can be matched with the detail in the log.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// WithLogger returns ctx carrying logger, for Logger.
func WithLogger(ctx context.Context, logger *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, logger)
}

// Logger returns the logger of the request (with its request id), or the
// default logger.
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
