package conversation

import (
	"context"
	"net/http"

	"github.com/agentline/agentline"
)

// Recordings keeps phone calls' recordings (recording.Calls).
type Recordings interface {
	// Serve answers with the recording of the project's call, Range
	// honoured; not found when there is none.
	Serve(w http.ResponseWriter, r *http.Request, projectID, callID int64) error
	// Delete removes it from the recordings store, if there is one.
	Delete(ctx context.Context, projectID, callID int64) error
}

// WithRecordings serves phone conversations' recordings from recs, and
// deletes them with their conversations.
func (h *Handler) WithRecordings(recs Recordings) *Handler {
	h.recordings = recs
	return h
}

// recording streams a phone conversation's recording (audio/wav) to
// members with VIEW on its project.
func (h *Handler) recording(w http.ResponseWriter, r *http.Request) error {
	projectID, id, err := h.conversationOf(r, agentline.PermView)
	if err != nil {
		return err
	}
	callID, ok := agentline.ParseCallConversationID(id)
	if !ok || h.recordings == nil {
		return agentline.NotFound("recording")
	}
	return h.recordings.Serve(w, r, projectID, callID)
}

// deleteRecording removes the recording of a phone conversation about to
// be deleted: first, so that a failure leaves the conversation (and a way
// to retry) rather than an object nothing points to.
func (h *Handler) deleteRecording(ctx context.Context, projectID int64, id string) error {
	callID, ok := agentline.ParseCallConversationID(id)
	if !ok || h.recordings == nil {
		return nil
	}
	return h.recordings.Delete(ctx, projectID, callID)
}
