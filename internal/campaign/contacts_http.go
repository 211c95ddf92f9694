package campaign

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/listing"
)

// Bounds of contacts. An upload is also bounded in bytes by the server's
// body limit (AGENTLINE_MAX_BODY_BYTES); a campaign holds at most what
// one export can give back whole.
const (
	MaxUploadContacts   = 10_000
	MaxCampaignContacts = 100_000
)

// uploadResult is the answer to an upload: how many contacts were stored
// (do_not_call of them on the project's list), how many repeated a
// number of the upload or of the campaign, and the refused rows.
type uploadResult struct {
	Added      int        `json:"added"`
	Duplicates int        `json:"duplicates"`
	DoNotCall  int        `json:"do_not_call"`
	Errors     []RowError `json:"errors"`
}

// addContacts takes a JSON array of contacts, or a CSV file sent with
// Content-Type: text/csv. The good rows are stored, all at once; the bad
// ones are answered with their line.
func (h *Handler) addContacts(w http.ResponseWriter, r *http.Request) error {
	c, err := h.campaign(r, agentline.PermCreate)
	if err != nil {
		return err
	}
	if c.Status == agentline.CampaignCompleted || c.Status == agentline.CampaignCancelled {
		// The store checks again as it adds them; this spares reading a
		// file for nothing.
		return agentline.Errorf(agentline.EConflict, "the campaign is %s; contacts can be added to a draft, running or paused campaign", c.Status)
	}
	csv, err := isCSV(r.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	// Read whole first (the edge bounds it), so that a body over the limit
	// answers too_large, not a parse error at the cut.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	parse := ParseContactsJSON
	if csv {
		parse = ParseContactsCSV
	}
	up, err := parse(bytes.NewReader(body), MaxUploadContacts)
	if err != nil {
		return err
	}
	DropUnreachable(&up, Window(c.CallingWindow), time.Now())
	out := uploadResult{Duplicates: up.Duplicates, Errors: up.Errors}
	if out.Errors == nil {
		out.Errors = []RowError{}
	}
	if len(up.Contacts) > 0 {
		contacts := make([]agentline.CampaignContact, len(up.Contacts))
		for i, ct := range up.Contacts {
			contacts[i] = agentline.CampaignContact{PhoneNumber: ct.PhoneNumber, Timezone: ct.Timezone, Variables: ct.Variables, Consent: ct.Consent}
		}
		added, dups, listed, err := h.store.AddContactsChecked(r.Context(), c.ProjectID, c.ID, &c.CallingWindow, contacts, MaxCampaignContacts)
		if err != nil {
			return err
		}
		out.Added, out.Duplicates, out.DoNotCall = added, out.Duplicates+dups, listed
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// isCSV tells a CSV upload (Content-Type text/csv) from a JSON one; any
// other type is read as JSON, as every other body of the API is.
func isCSV(contentType string) (bool, error) {
	if contentType == "" {
		return false, nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false, agentline.Invalid("Content-Type", "Content-Type %s cannot be read; send application/json or text/csv", quote(contentType))
	}
	return mt == "text/csv", nil
}

// statusFilter reads the status query parameter: "" or a contact status.
func statusFilter(r *http.Request) (string, error) {
	s := r.URL.Query().Get("status")
	if s != "" && !slices.Contains(agentline.ContactStatuses(), s) {
		return "", agentline.Invalid("status", "status must be one of %s", strings.Join(agentline.ContactStatuses(), ", "))
	}
	return s, nil
}

// contacts lists a campaign's contacts in the order they were added,
// optionally those with one status.
func (h *Handler) contacts(w http.ResponseWriter, r *http.Request) error {
	c, err := h.campaign(r, agentline.PermView)
	if err != nil {
		return err
	}
	status, err := statusFilter(r)
	if err != nil {
		return err
	}
	limit, after, err := listing.IntPage(r.URL.Query())
	if err != nil {
		return err
	}
	list, err := h.store.CampaignContacts(r.Context(), c.ProjectID, c.ID, status, after, limit+1)
	if err != nil {
		return err
	}
	list, next := listing.Next(list, limit, func(ct agentline.CampaignContact) listing.Cursor { return listing.After(ct.ID) })
	if list == nil {
		list = []agentline.CampaignContact{}
	}
	httpx.WriteJSON(w, http.StatusOK, struct {
		Contacts   []agentline.CampaignContact `json:"contacts"`
		NextCursor *string                     `json:"next_cursor"`
	}{list, next})
	return nil
}

// exportColumns are contacts.csv's columns before the variables, one
// column each ("variables.NAME"), in name order.
var exportColumns = []string{"id", "phone_number", "timezone", "status", "attempts", "next_attempt_at", "consent_source",
	"consent_at", "conversation_ids", "last_outcome", "last_success", "last_summary", "dials"}

// exportContacts serves contacts.csv: every contact of the campaign (or
// of one status) with its variables and each dial with the consent it
// relied on, through the CSV writer that neutralizes formulas.
func (h *Handler) exportContacts(w http.ResponseWriter, r *http.Request) error {
	c, err := h.campaign(r, agentline.PermView)
	if err != nil {
		return err
	}
	status, err := statusFilter(r)
	if err != nil {
		return err
	}
	var all []agentline.CampaignContact
	const batch = 1000
	for after := int64(0); ; {
		list, err := h.store.CampaignContacts(r.Context(), c.ProjectID, c.ID, status, after, batch)
		if err != nil {
			return err
		}
		all = append(all, list...)
		if len(list) < batch {
			break
		}
		after = list[len(list)-1].ID
	}
	names := map[string]bool{}
	for _, ct := range all {
		for name := range ct.Variables {
			names[name] = true
		}
	}
	vars := slices.Sorted(maps.Keys(names))
	cw := httpx.NewCSV(w, fmt.Sprintf("campaign-%d-contacts.csv", c.ID))
	header := slices.Clone(exportColumns)
	for _, name := range vars {
		header = append(header, "variables."+name)
	}
	cw.Write(header)
	for _, ct := range all {
		if err := cw.Write(append(exportRow(ct), variableCells(ct, vars)...)); err != nil {
			return nil // the client went away; nothing more to answer
		}
	}
	if err := cw.Flush(); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		httpx.Logger(r.Context()).Warn("contacts export cut short", "campaign_id", c.ID, "err", err)
	}
	return nil
}

// exportRow is a contact's cells of exportColumns.
func exportRow(ct agentline.CampaignContact) []string {
	source, at := consentCells(ct.Consent)
	var outcome, success, summary string
	if o := ct.LastOutcome; o != nil {
		outcome, summary = o.Outcome, o.Summary
		if o.Success != nil {
			success = strconv.FormatBool(*o.Success)
		}
	}
	dials := make([]string, len(ct.Dials))
	for i, d := range ct.Dials {
		dials[i] = dialText(d)
	}
	return []string{strconv.FormatInt(ct.ID, 10), ct.PhoneNumber, ct.Timezone, ct.Status, strconv.Itoa(ct.Attempts),
		timeCell(ct.NextAttemptAt), source, at, strings.Join(ct.ConversationIDs, " "), outcome, success, summary,
		strings.Join(dials, "\n")}
}

func variableCells(ct agentline.CampaignContact, names []string) []string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = ct.Variables[name]
	}
	return out
}

// dialText is one dial as a line of the dials cell: "attempt 2 at
// 2024-06-03T14:00:05Z, call_12, busy, consent: web form (2024-05-01T12:00:00Z)".
func dialText(d agentline.CampaignDial) string {
	parts := []string{fmt.Sprintf("attempt %d at %s", d.Attempt, d.DialedAt.UTC().Format(time.RFC3339))}
	if d.CallID != nil {
		parts = append(parts, agentline.CallConversationID(*d.CallID))
	}
	if d.Outcome != "" {
		parts = append(parts, d.Outcome)
	}
	consent := "consent: none"
	if source, at := consentCells(d.Consent); source != "" {
		consent = "consent: " + source
		if at != "" {
			consent += " (" + at + ")"
		}
	}
	return strings.Join(append(parts, consent), ", ")
}

func consentCells(c *agentline.ContactConsent) (source, at string) {
	if c == nil {
		return "", ""
	}
	if !c.At.IsZero() {
		at = c.At.UTC().Format(time.RFC3339)
	}
	return c.Source, at
}

func timeCell(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
