package app

import (
	"context"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// PlaceCall places an outbound call with options the single-call endpoint
// does not take (machine detection), as the campaign engine does; tests of
// the sandbox's answering machines use it.
func (a *App) PlaceCall(ctx context.Context, projectID, agentID int64, to string, opts telephony.CallOptions) (agentline.Call, error) {
	return a.phone.PlaceCall(ctx, projectID, agentID, to, opts)
}

// SandboxCarrier is the sandbox's pretend Twilio, nil unless it is the
// carrier: its log of calls is what a campaign is checked against.
func (a *App) SandboxCarrier() *twiliofake.Fake { return a.sandboxPhone }

// TracingOn reports whether the app built a tracer provider (an OTLP
// endpoint is set).
func (a *App) TracingOn() bool { return a.tracing != nil }
