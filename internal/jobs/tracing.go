package jobs

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentline/agentline"
)

// tracingMiddleware gives every job run a span named by its kind, in one
// place for every worker, with the conversation id when the job's
// arguments carry one (analysis, deliveries of a conversation's events).
func tracingMiddleware(tp trace.TracerProvider) rivertype.Middleware {
	tracer := tp.Tracer("github.com/agentline/agentline/internal/jobs")
	return river.WorkerMiddlewareFunc(func(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
		attrs := []attribute.KeyValue{
			attribute.String("agentline.job.kind", job.Kind),
			attribute.Int64("agentline.job.id", job.ID),
			attribute.Int("agentline.job.attempt", job.Attempt),
		}
		if id := conversationOf(job.EncodedArgs); id != "" {
			attrs = append(attrs, attribute.String(agentline.ConversationIDAttribute, id))
		}
		ctx, span := tracer.Start(ctx, job.Kind, trace.WithAttributes(attrs...))
		defer span.End()
		err := doInner(ctx)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	})
}

// conversationOf is the conversation_id of a job's arguments, if any.
// Arguments that cannot hold one (sweeps, mail) are not decoded: every job
// run passes here when tracing is on.
func conversationOf(args []byte) string {
	if !bytes.Contains(args, []byte(`"conversation_id"`)) {
		return ""
	}
	var v struct {
		ConversationID string `json:"conversation_id"`
	}
	json.Unmarshal(args, &v)
	return v.ConversationID
}
