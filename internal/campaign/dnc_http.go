package campaign

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// MaxReasonLength bounds why a number is on the do-not-call list.
const MaxReasonLength = 500

type doNotCallInput struct {
	PhoneNumber string `json:"phone_number"`
	Reason      string `json:"reason"`
}

// addDoNotCall puts a number on the project's list (201), or answers the
// entry already there (200). From then on no campaign of the project
// dials it: its pending contacts become do_not_call at once.
func (h *Handler) addDoNotCall(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	var in doNotCallInput
	if err := httpx.Decode(r, &in); err != nil {
		return err
	}
	phone, _, err := normalizePhone(in.PhoneNumber)
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(in.Reason)
	if utf8.RuneCountInString(reason) > MaxReasonLength || !cleanText(reason) {
		return agentline.Invalid("reason", "reason must be text of at most %d characters", MaxReasonLength)
	}
	e, created, err := h.store.AddDoNotCall(r.Context(), projectID, agentline.DoNotCall{PhoneNumber: phone, Reason: reason})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpx.WriteJSON(w, status, e)
	return nil
}

// doNotCallList lists the project's list in the order of the numbers'
// digits.
func (h *Handler) doNotCallList(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermView)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit, err := listing.Limit(q, listing.DefaultPageSize, listing.MaxPageSize)
	if err != nil {
		return err
	}
	cursor, err := listing.ParseCursor(q.Get("cursor"))
	if err != nil {
		return err
	}
	after := ""
	if cursor != nil {
		if !cursor.Time.IsZero() || !strings.HasPrefix(cursor.ID, "+") {
			return agentline.Invalid("cursor", "cursor is not one this API gave out: pass next_cursor as it is")
		}
		after = cursor.ID
	}
	list, err := h.store.DoNotCallList(r.Context(), projectID, after, limit+1)
	if err != nil {
		return err
	}
	list, next := listing.Next(list, limit, func(e agentline.DoNotCall) listing.Cursor { return listing.Cursor{ID: e.PhoneNumber} })
	if list == nil {
		list = []agentline.DoNotCall{}
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Items      []agentline.DoNotCall `json:"items"`
		NextCursor *string               `json:"next_cursor"`
	}{list, next})
	return nil
}

// deleteDoNotCall takes a number off the list. Contacts already marked
// do_not_call stay so; later uploads of the number are called.
func (h *Handler) deleteDoNotCall(w http.ResponseWriter, r *http.Request) error {
	projectID, _, err := h.auth.AuthorizeProjectPath(r, agentline.PermDelete)
	if err != nil {
		return err
	}
	phone, _, err := normalizePhone(r.PathValue("phone_number"))
	if err != nil {
		return agentline.NotFound("do-not-call number")
	}
	if err := h.store.DeleteDoNotCall(r.Context(), projectID, phone); err != nil {
		return err
	}
	httpx.NoContent(w)
	return nil
}
