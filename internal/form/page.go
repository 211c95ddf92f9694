package form

import (
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/httpx"
)

// pageTemplate is the public form page. It is a plain HTML form that posts
// natively (the answer is this page again, with the thank-you message or
// with each field's problem next to it), so it works with JavaScript off;
// with it on, the script sends the same answers as JSON and shows the same
// messages without a reload.
var pageTemplate = template.Must(template.New("form").Parse(httpx.PageHead + `<title>{{.Title}}</title>
<style nonce="{{.Nonce}}">
*{box-sizing:border-box}
body{margin:0;padding:16px;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827;background:#fff}
main{max-width:520px;margin:0 auto}
h1{font-size:22px;margin:0 0 12px}
.field{margin:0 0 14px}
label{display:block;font-weight:600;margin-bottom:4px}
.req{color:#991b1b}
input[type=text],input[type=email],input[type=tel],textarea,select{width:100%;padding:9px 10px;border:1px solid #6b7280;border-radius:6px;font:inherit;color:#111827;background:#fff}
textarea{min-height:110px}
.check label{display:inline;font-weight:400}
input[aria-invalid=true],textarea[aria-invalid=true],select[aria-invalid=true]{border:2px solid #b91c1c}
.err{margin:4px 0 0;color:#991b1b;font-weight:600}
.err:empty{display:none}
.summary{padding:10px 12px;border-radius:6px;background:#fef2f2;color:#991b1b;margin:0 0 14px}
.summary:empty{display:none}
.hint{margin:0 0 14px;color:#374151}
.thanks{padding:14px;border-radius:6px;background:#ecfdf5;color:#065f46;font-size:18px}
button{padding:10px 18px;border:0;border-radius:6px;font:inherit;font-weight:700;color:#fff;background:#2563eb;cursor:pointer}
:focus-visible{outline:3px solid #111827;outline-offset:2px}
.hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
</style>
</head><body><main>
{{if .ThankYou}}<p class="thanks" role="status" tabindex="-1" id="thanks">{{.ThankYou}}</p>
{{else}}<h1>{{.Title}}</h1>
<form method="post" action="{{.Action}}" novalidate data-thanks="{{.Form.ThankYouMessage}}">
<p class="summary" role="alert" id="summary">{{.Summary}}</p>
{{if .AnyRequired}}<p class="hint">Fields marked <span class="req">*</span> are required.</p>
{{end}}{{range .Fields}}<div class="field{{if .Checkbox}} check{{end}}">
{{if .Checkbox}}<input type="checkbox" id="f-{{.Name}}" name="{{.Name}}" value="on"{{if .Checked}} checked{{end}}{{if .Required}} required aria-required="true"{{end}} aria-describedby="e-{{.Name}}"{{if .Error}} aria-invalid="true"{{end}}>
<label for="f-{{.Name}}">{{.Label}}{{if .Required}} <span class="req" aria-hidden="true">*</span>{{end}}</label>
{{else}}<label for="f-{{.Name}}">{{.Label}}{{if .Required}} <span class="req" aria-hidden="true">*</span>{{end}}</label>
{{if eq .Type "textarea"}}<textarea id="f-{{.Name}}" name="{{.Name}}" maxlength="{{.Max}}"{{if .Required}} required aria-required="true"{{end}} aria-describedby="e-{{.Name}}"{{if .Error}} aria-invalid="true"{{end}}>{{.Value}}</textarea>
{{else if eq .Type "select"}}<select id="f-{{.Name}}" name="{{.Name}}"{{if .Required}} required aria-required="true"{{end}} aria-describedby="e-{{.Name}}"{{if .Error}} aria-invalid="true"{{end}}>
<option value="">Choose…</option>
{{$v := .Value}}{{range .Options}}<option{{if eq . $v}} selected{{end}}>{{.}}</option>
{{end}}</select>
{{else}}<input type="{{.Type}}" id="f-{{.Name}}" name="{{.Name}}" value="{{.Value}}" maxlength="{{.Max}}"{{if .Autocomplete}} autocomplete="{{.Autocomplete}}"{{end}}{{if .Required}} required aria-required="true"{{end}} aria-describedby="e-{{.Name}}"{{if .Error}} aria-invalid="true"{{end}}>
{{end}}{{end}}<p class="err" id="e-{{.Name}}">{{.Error}}</p>
</div>
{{end}}<div class="hp" aria-hidden="true"><label for="f-hp">Leave this empty</label><input type="text" id="f-hp" name="{{.Honeypot}}" tabindex="-1" autocomplete="off"></div>
<button type="submit">{{.Form.SubmitLabel}}</button>
</form>
<script nonce="{{.Nonce}}">
(function () {
  var form = document.querySelector("form");
  var summary = document.getElementById("summary");
  function show(errors) {
    var first = null;
    form.querySelectorAll("[name]").forEach(function (el) {
      var e = document.getElementById("e-" + el.name);
      if (!e) return;
      var msg = errors[el.name] || "";
      e.textContent = msg ? el.labels[0].firstChild.textContent.trim() + " " + msg + "." : "";
      if (msg) { el.setAttribute("aria-invalid", "true"); first = first || el; } else el.removeAttribute("aria-invalid");
    });
    return first;
  }
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var data = {};
    form.querySelectorAll("[name]").forEach(function (el) { data[el.name] = el.type === "checkbox" ? el.checked : el.value; });
    var button = form.querySelector("button");
    button.disabled = true;
    fetch(form.action, { method: "POST", headers: { "Content-Type": "application/json", "Accept": "application/json" }, body: JSON.stringify(data) })
      .then(function (res) { return res.json().catch(function () { return {}; }).then(function (body) { return [res, body]; }); })
      .then(function (r) {
        var res = r[0], body = r[1];
        if (res.ok) {
          var p = document.createElement("p");
          p.className = "thanks"; p.setAttribute("role", "status"); p.tabIndex = -1; p.id = "thanks";
          p.textContent = form.getAttribute("data-thanks");
          form.parentNode.replaceChild(p, form);
          document.querySelector("h1").remove();
          p.focus();
          return;
        }
        var err = body.error || {};
        var first = show(err.fields || (err.field ? (function (o) { o[err.field] = err.message; return o; })({}) : {}));
        summary.textContent = err.fields ? "Please correct the fields marked below." : (err.message || "Something went wrong. Please try again.");
        (first || summary).focus();
      })
      .catch(function () { summary.textContent = "We couldn\u2019t send the form. Check your connection and try again."; })
      .finally(function () { button.disabled = false; });
  });
})();
</script>
{{end}}</main></body></html>
`))

// fieldView is one field as the page shows it.
type fieldView struct {
	agentline.FormField
	Value        string
	Checked      bool
	Error        string
	Checkbox     bool
	Max          int
	Autocomplete string
}

type pageData struct {
	Nonce, Title, Action, Summary, ThankYou, Honeypot string
	Form                                              *agentline.FormSettings
	Fields                                            []fieldView
	AnyRequired                                       bool
}

// autocomplete hints by common field name, so browsers can fill them in.
var autocomplete = map[string]string{"name": "name", "email": "email", "phone": "tel", "tel": "tel", "company": "organization"}

// renderPage answers with the form page: empty, or with what was sent and
// each field's problem, or the thank-you message.
// title is the heading (pageTitle).
func renderPage(w http.ResponseWriter, status int, ch agentline.Channel, title string, sub submission, fe fieldErrors, thanks bool) {
	n := httpx.Nonce()
	d := pageData{Nonce: n, Title: title, Form: ch.Settings.Form, Honeypot: HoneypotField,
		Action: "/api/channels/form/submit/" + strconv.FormatInt(ch.ID, 10)}
	if thanks {
		d.ThankYou = ch.Settings.Form.ThankYouMessage
	}
	for _, fd := range ch.Settings.Form.Fields {
		v := fieldView{FormField: fd, Value: sub.text[fd.Name], Checked: sub.checked[fd.Name], Checkbox: fd.Type == agentline.FieldCheckbox,
			Max: agentline.MaxShortAnswer, Autocomplete: autocomplete[fd.Name]}
		if fd.Type == agentline.FieldTextarea {
			v.Max = agentline.MaxAnswerLength
		}
		if msg := fe[fd.Name]; msg != "" {
			v.Error = fd.Label + " " + msg + "."
		}
		d.Fields = append(d.Fields, v)
		d.AnyRequired = d.AnyRequired || fd.Required
	}
	if len(fe) > 0 {
		d.Summary = "Please correct the fields marked below."
		for name, msg := range fe {
			if _, ok := ch.Settings.Form.Field(name); !ok {
				d.Summary += " (" + name + " " + msg + ".)"
			}
		}
	}
	csp := "default-src 'none'; style-src 'nonce-" + n + "'; script-src 'nonce-" + n +
		"'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors *"
	httpx.WriteHTML(w, status, csp, pageTemplate, d)
}

// setRetryAfter sets Retry-After when err asks the client to wait.
func setRetryAfter(w http.ResponseWriter, err error) {
	var e *agentline.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
}

// writeMessage is the form's answer to a request that cannot show the form.
func writeMessage(w http.ResponseWriter, status int, sentence string) {
	httpx.MessagePage{Title: "Form", Style: "font:16px/1.5 system-ui,sans-serif;margin:16px;color:#111827"}.Write(w, status, sentence)
}

// page serves GET /api/channels/form/embed/{channel_id}.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	channelID, err := httpx.PathID(r, "channel_id")
	if err != nil {
		writeMessage(w, http.StatusNotFound, "This form does not exist.")
		return
	}
	ch, err := h.formChannel(r.Context(), channelID)
	if err != nil {
		if agentline.ErrorCode(err) == agentline.ENotFound {
			writeMessage(w, http.StatusNotFound, "This form does not exist.")
			return
		}
		httpx.Logger(r.Context()).Error("form page", "channel_id", channelID, "err", err)
		setRetryAfter(w, httpx.Classify(err))
		writeMessage(w, http.StatusServiceUnavailable, "The form is unavailable right now. Please try again in a minute.")
		return
	}
	renderPage(w, http.StatusOK, ch, h.pageTitle(r.Context(), ch), submission{}, nil, false)
}

// wantsHTML reports whether the submit came from a browser posting the
// page natively (form-encoded, asking for HTML), which is answered with
// the page rather than JSON.
func wantsHTML(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") &&
		strings.Contains(r.Header.Get("Accept"), "text/html")
}
