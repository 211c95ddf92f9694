package app

import (
	"context"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/telephony"
)

// PlaceCall places an outbound call with options the single-call endpoint
// does not take (machine detection), as the campaign engine does; tests of
// the sandbox's answering machines use it.
func (a *App) PlaceCall(ctx context.Context, projectID, agentID int64, to string, opts telephony.CallOptions) (agentline.Call, error) {
	return a.phone.PlaceCall(ctx, projectID, agentID, to, opts)
}
