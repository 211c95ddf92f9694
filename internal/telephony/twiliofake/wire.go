package twiliofake

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Sign returns the X-Twilio-Signature Twilio sends with a form POST to
// fullURL: base64 HMAC-SHA1, keyed with the auth token, of the URL followed
// by each parameter's name and value, sorted by name.
func Sign(authToken, fullURL string, form url.Values) string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(fullURL)
	for _, k := range keys {
		for _, v := range form[k] {
			b.WriteString(k)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func parseForm(w http.ResponseWriter, r *http.Request) bool {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		writeError(w, http.StatusBadRequest, 20001, "Content-Type must be application/x-www-form-urlencoded, not "+ct)
		return false
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, 20001, "malformed form body")
		return false
	}
	return true
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func writeError(w http.ResponseWriter, status, code int, message string) {
	writeJSON(w, status, map[string]any{
		"code": code, "message": message, "status": status,
		"more_info": fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code),
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
