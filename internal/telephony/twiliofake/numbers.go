package twiliofake

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func (f *Fake) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	country := r.PathValue("country")
	if country != "US" {
		writeJSON(w, http.StatusOK, map[string]any{"available_phone_numbers": []AvailableNumber{}, "next_page_uri": nil, "uri": r.URL.RequestURI()})
		return
	}
	area := q.Get("AreaCode")
	if area != "" && !areaCode.MatchString(area) {
		writeError(w, http.StatusBadRequest, 21452, "AreaCode is invalid")
		return
	}
	size := 50
	if s := q.Get("PageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, 20001, "PageSize is invalid")
			return
		}
		size = n
	}
	for _, flag := range []string{"VoiceEnabled", "SmsEnabled", "MmsEnabled"} {
		if v := q.Get(flag); v != "" && v != "true" && v != "false" {
			writeError(w, http.StatusBadRequest, 20001, flag+" must be true or false")
			return
		}
	}
	f.mu.Lock()
	owned := map[string]bool{}
	for _, n := range f.numbers {
		if !n.Released {
			owned[n.PhoneNumber] = true
		}
	}
	out := []AvailableNumber{}
	for _, n := range f.available {
		if owned[n.PhoneNumber] || (area != "" && !strings.HasPrefix(n.PhoneNumber, "+1"+area)) {
			continue
		}
		if len(out) < size {
			out = append(out, n)
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"available_phone_numbers": out, "next_page_uri": nil, "uri": r.URL.RequestURI()})
}

var areaCode = regexp.MustCompile(`^[0-9]{3}$`)

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

func (f *Fake) buy(w http.ResponseWriter, r *http.Request) {
	if !parseForm(w, r) {
		return
	}
	phone := r.PostForm.Get("PhoneNumber")
	if phone == "" && r.PostForm.Get("AreaCode") == "" {
		writeError(w, http.StatusBadRequest, 21450, "Either PhoneNumber or AreaCode is required")
		return
	}
	if phone == "" {
		writeError(w, http.StatusBadRequest, 21452, "No phone numbers found in area code")
		return
	}
	if !e164.MatchString(phone) {
		writeError(w, http.StatusBadRequest, 21421, "PhoneNumber is invalid")
		return
	}
	for _, field := range []string{"VoiceUrl", "StatusCallback"} {
		if v := r.PostForm.Get(field); v != "" && !validURL(v) {
			writeError(w, http.StatusBadRequest, 21502, field+" is not a valid URL: "+v)
			return
		}
	}
	for _, field := range []string{"VoiceMethod", "StatusCallbackMethod"} {
		if v := r.PostForm.Get(field); v != "" && v != "GET" && v != "POST" {
			writeError(w, http.StatusBadRequest, 21503, field+" must be GET or POST")
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.numbers {
		if n.PhoneNumber == phone && !n.Released {
			writeError(w, http.StatusBadRequest, 21422, "PhoneNumber "+phone+" is not available")
			return
		}
	}
	n := &Number{
		SID: "PN" + randomHex(16), PhoneNumber: phone, FriendlyName: r.PostForm.Get("FriendlyName"),
		VoiceURL: r.PostForm.Get("VoiceUrl"), VoiceMethod: orDefault(r.PostForm.Get("VoiceMethod"), "POST"),
		StatusCallback: r.PostForm.Get("StatusCallback"), StatusCallbackMethod: orDefault(r.PostForm.Get("StatusCallbackMethod"), "POST"),
	}
	if n.FriendlyName == "" {
		n.FriendlyName = phone
	}
	f.numbers = append(f.numbers, n)
	writeJSON(w, http.StatusCreated, f.numberJSON(n))
}

func (f *Fake) numberJSON(n *Number) map[string]any {
	return map[string]any{
		"sid": n.SID, "account_sid": f.accountSID, "phone_number": n.PhoneNumber, "friendly_name": n.FriendlyName,
		"voice_url": n.VoiceURL, "voice_method": n.VoiceMethod, "status_callback": n.StatusCallback,
		"status_callback_method": n.StatusCallbackMethod, "status": "in-use", "api_version": "2010-04-01",
		"capabilities": map[string]bool{"voice": true, "sms": true, "mms": true, "fax": false},
		"date_created": time.Now().UTC().Format(time.RFC1123Z),
		"uri":          "/2010-04-01/Accounts/" + f.accountSID + "/IncomingPhoneNumbers/" + n.SID + ".json",
	}
}

// listNumbers answers the account's numbers, filtered by PhoneNumber when
// given, in one page.
func (f *Fake) listNumbers(w http.ResponseWriter, r *http.Request) {
	phone := r.URL.Query().Get("PhoneNumber")
	f.mu.Lock()
	out := []map[string]any{}
	for _, n := range f.numbers {
		if !n.Released && (phone == "" || n.PhoneNumber == phone) {
			out = append(out, f.numberJSON(n))
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"incoming_phone_numbers": out, "next_page_uri": nil, "uri": r.URL.RequestURI()})
}

func (f *Fake) release(w http.ResponseWriter, r *http.Request) {
	sid, ok := strings.CutSuffix(r.PathValue("sid"), ".json")
	if !ok {
		writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.numbers {
		if n.SID == sid && !n.Released {
			n.Released = true
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeError(w, http.StatusNotFound, 20404, "The requested resource "+r.URL.Path+" was not found")
}
