package form

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/auth"
	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/ratelimit"
)

// submitAnswer is the JSON answer of a stored submission. Lead capture
// carries lead_id; live chat the agent and session to continue with
// (POST /widget/v1/session with the channel's key).
type submitAnswer struct {
	Mode      agentline.FormMode `json:"mode"`
	LeadID    int64              `json:"lead_id"`
	AgentID   *int64             `json:"agent_id,omitempty"`
	SessionID *string            `json:"session_id,omitempty"`
}

// submit serves POST /api/channels/form/submit/{channel_id}: public, JSON
// or form-encoded. Every refusal is logged with its reason.
func (h *Handler) submit(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	html := wantsHTML(r)
	log := httpx.Logger(r.Context()).With("client_ip", auth.ClientIP(r))
	ch, sub, err := h.doSubmit(w, r, log, html)
	if err == nil {
		return
	}
	err = httpx.Classify(err)
	code := agentline.ErrorCode(err)
	if !html {
		if httpx.Status(code) < 500 { // WriteError logs the others
			log.Warn("form submit refused", "reason", code, "detail", refusal(err))
		}
		httpx.WriteError(w, r, err)
		return
	}
	if httpx.Status(code) >= 500 {
		log.Error("form submit failed", "reason", code, "err", err)
	} else {
		log.Warn("form submit refused", "reason", code, "detail", refusal(err))
	}
	var e *agentline.Error
	errors.As(err, &e)
	switch {
	case code == agentline.ENotFound:
		writeMessage(w, http.StatusNotFound, "This form does not exist.")
	case code == agentline.EInvalid && e != nil && ch.Settings.Form != nil && e.Field != "":
		fe := fieldErrors(e.Fields)
		if fe == nil {
			fe = fieldErrors{e.Field: "cannot be accepted"}
		}
		renderPage(w, http.StatusBadRequest, ch, h.pageTitle(r.Context(), ch), sub, fe, false)
	case code == agentline.ERateLimited:
		setRetryAfter(w, err)
		writeMessage(w, http.StatusTooManyRequests, "Too many forms were sent from your connection. Please wait a minute and try again.")
	case code == agentline.EUnavailable:
		// The database is down (or the instance refuses work): the visitor
		// goes back to the page, where the browser kept the answers.
		setRetryAfter(w, err)
		writeMessage(w, http.StatusServiceUnavailable, "The form could not be sent right now, and nothing was saved. Please go back and send it again in a minute.")
	case code == agentline.EInternal || httpx.Status(code) >= 500:
		writeMessage(w, http.StatusServiceUnavailable, "The form could not be sent right now. Please try again later.")
	default:
		writeMessage(w, httpx.Status(code), "The form could not be sent: "+agentline.ErrorMessage(err))
	}
}

// doSubmit reads, checks, stores and answers a submission; an error is
// for submit to log and answer. It returns the channel and what was sent,
// for the page shown again.
//
// The per-client limit counts what is stored and what is refused as
// abuse (the honeypot, an unknown form, a body too large or unreadable),
// but not a submission refused only for its answers: a visitor who
// mistyped an email several times must still be able to send the form.
func (h *Handler) doSubmit(w http.ResponseWriter, r *http.Request, log *slog.Logger, html bool) (agentline.Channel, submission, error) {
	ctx := r.Context()
	ch, sub, answers, err := h.readForm(w, r)
	if !answersRefused(err) {
		if lerr := h.count(ctx, w, r); lerr != nil {
			return ch, sub, lerr
		}
	}
	if err != nil {
		return ch, sub, err
	}
	lead, err := h.storeLead(httpx.WithLogger(ctx, log), ch, answers, r.Header.Get("Origin"))
	if err != nil {
		return ch, sub, err
	}
	if html {
		renderPage(w, http.StatusCreated, ch, h.pageTitle(ctx, ch), submission{}, nil, true)
		return ch, sub, nil
	}
	httpx.WriteJSON(w, http.StatusCreated, submitAnswer{Mode: lead.Mode, LeadID: lead.ID, AgentID: lead.AgentID, SessionID: lead.SessionID})
	return ch, sub, nil
}

// readForm finds the form of the request's channel, reads the submission
// and checks its answers.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request) (ch agentline.Channel, sub submission, answers map[string]any, err error) {
	channelID, err := httpx.PathID(r, "channel_id")
	if err != nil {
		return ch, sub, nil, err
	}
	if r.ContentLength > maxSubmitBytes {
		return ch, sub, nil, errTooLarge
	}
	if ch, err = h.formChannel(r.Context(), channelID); err != nil {
		return ch, sub, nil, err
	}
	if sub, err = readSubmission(w, r, ch.Settings.Form); err != nil {
		return ch, sub, nil, err
	}
	answers, err = screen(ch.Settings.Form, sub)
	return ch, sub, answers, err
}

// count counts the submission toward its client's per-minute limit and
// sets the RateLimit-* headers; over the limit it is refused.
func (h *Handler) count(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	res, err := h.limiter.Allow(ctx, "form_ip:"+auth.ClientIP(r), []ratelimit.Window{{Limit: h.perMin, Period: time.Minute}})
	if err != nil {
		return err
	}
	res.WriteHeaders(w.Header())
	if !res.Allowed {
		return res.Err()
	}
	return nil
}

// maxStoredOrigin bounds the Origin kept with a live chat session.
const maxStoredOrigin = 300

// submitForm checks a visitor's answers against the channel's form and
// stores them as a lead; in live chat mode together with the pending
// session the visitor's widget then continues (POST /widget/v1/session),
// in one write, so there is never a lead without its session. The stored
// lead goes to the form's notify_url. origin is the page's, kept with the
// session.
func (h *Handler) submitForm(ctx context.Context, ch agentline.Channel, sub submission, origin string) (agentline.Lead, error) {
	answers, err := screen(ch.Settings.Form, sub)
	if err != nil {
		return agentline.Lead{}, err
	}
	return h.storeLead(ctx, ch, answers, origin)
}

// screen refuses a bot (the honeypot filled in) and answers the form does
// not take, and returns the answers to store.
func screen(form *agentline.FormSettings, sub submission) (map[string]any, error) {
	if sub.honeypot != "" {
		return nil, errHoneypot
	}
	fe := fieldErrors{}
	for name, msg := range sub.problems {
		fe[name] = msg
	}
	answers := check(form, sub, fe)
	if len(fe) > 0 {
		return nil, fe.err()
	}
	return answers, nil
}

// errHoneypot refuses a submission with the hidden field filled in. Its
// message names no field, so that a bot is not told which one gave it
// away; the log says it (refusal).
var errHoneypot = &agentline.Error{Code: agentline.EInvalid, Message: "this submission cannot be accepted",
	Err: errors.New("the hidden field " + HoneypotField + " was filled in")}

// refusal is what the log says of a refused submission: the message the
// client got, and the cause it did not get, if any.
func refusal(err error) string {
	var e *agentline.Error
	if errors.As(err, &e) && e.Err != nil && e.Code != agentline.EInternal {
		return e.Message + " (" + e.Err.Error() + ")"
	}
	return agentline.ErrorMessage(err)
}

// answersRefused says err refuses a submission for its answers alone:
// fieldErrors.err's error, the only one that carries Fields.
func answersRefused(err error) bool {
	var e *agentline.Error
	return errors.As(err, &e) && e.Code == agentline.EInvalid && e.Fields != nil
}

// storeLead stores checked answers as a lead of ch.
func (h *Handler) storeLead(ctx context.Context, ch agentline.Channel, answers map[string]any, origin string) (agentline.Lead, error) {
	form := ch.Settings.Form
	lead := agentline.Lead{ProjectID: ch.ProjectID, ChannelID: ch.ID, Mode: form.Mode, Answers: answers}
	var session *agentline.WidgetSession
	if form.Mode == agentline.FormLiveChat {
		if ch.AgentID == nil {
			return agentline.Lead{}, agentline.Errorf(agentline.ENotConfigured, "this live chat form has no agent")
		}
		id, err := agentline.NewSessionID()
		if err != nil {
			return agentline.Lead{}, fmt.Errorf("new session id: %w", err)
		}
		if len(origin) > maxStoredOrigin {
			origin = origin[:maxStoredOrigin]
		}
		session = &agentline.WidgetSession{ID: id, ProjectID: ch.ProjectID, ChannelID: ch.ID, AgentID: *ch.AgentID, Origin: origin}
	}
	lead, err := h.store.CreateLeadThen(ctx, lead, session, func(ctx context.Context, l agentline.Lead, out agentline.Outbox) error {
		if err := leadCreated(ctx, ch, l, out); err != nil {
			return err
		}
		return leadContact(ctx, ch, l, out)
	})
	if err != nil {
		return agentline.Lead{}, fmt.Errorf("store lead: %w", err)
	}
	httpx.Logger(ctx).Info("form lead stored", "lead_id", lead.ID, "channel_id", ch.ID, "project_id", ch.ProjectID, "mode", lead.Mode)
	return lead, nil
}

// leadCreated emits lead.created to the project's webhook endpoints and
// enqueues the notify_url delivery, in the transaction that stores l.
func leadCreated(ctx context.Context, ch agentline.Channel, l agentline.Lead, out agentline.Outbox) error {
	data := map[string]any{"lead": l, "channel": map[string]any{"id": ch.ID, "name": ch.Name}}
	ev, err := agentline.NewEvent(l.ProjectID, agentline.EventLeadCreated, "lead:"+strconv.FormatInt(l.ID, 10), data)
	if err != nil {
		return err
	}
	if err := out.Emit(ctx, ev); err != nil {
		return err
	}
	job, ok, err := notifyJob(ch, l)
	if err != nil || !ok {
		return err
	}
	return out.Enqueue(ctx, job)
}
