// Package callsim plays the carrier's side of a phone call against a
// running agentline: it posts the inbound webhook like Twilio, opens the
// media stream the TwiML names with its parameters, and speaks the Media
// Streams protocol (connected, start, media, mark, dtmf, stop) over a
// WebSocket. `agentline call` and the end-to-end tests use it.
package callsim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// FrameBytes is one 20 ms frame of 8 kHz mu-law.
const FrameBytes = 160

// Stream is the <Stream> of a TwiML answer: where to connect and the
// parameters the carrier hands over in the start message.
type Stream struct {
	URL    string
	Params map[string]string
}

// twimlVerb is one verb of a TwiML <Response>.
type twimlVerb struct {
	XMLName xml.Name
	Text    string `xml:",chardata"`
	Stream  struct {
		URL    string `xml:"url,attr"`
		Params []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"Parameter"`
	} `xml:"Stream"`
}

// ParseTwiML finds the <Connect><Stream> of a TwiML document; a document
// without one (a <Say> and <Hangup/>, say) is an error quoting it. A stream
// must be followed by <Hangup/> and nothing else: the carrier runs the next
// verb when the stream closes, so anything else would keep the line open.
func ParseTwiML(doc string) (Stream, error) {
	var r struct {
		Verbs []twimlVerb `xml:",any"`
	}
	if err := xml.Unmarshal([]byte(doc), &r); err != nil {
		return Stream{}, fmt.Errorf("TwiML: %w", err)
	}
	said := ""
	for i, v := range r.Verbs {
		if v.XMLName.Local == "Say" && said == "" {
			said = v.Text
		}
		if v.XMLName.Local != "Connect" || v.Stream.URL == "" {
			continue
		}
		if len(r.Verbs) != i+2 || r.Verbs[i+1].XMLName.Local != "Hangup" {
			return Stream{}, fmt.Errorf("the TwiML's <Connect> is not followed by <Hangup/> alone: %s", doc)
		}
		s := Stream{URL: v.Stream.URL, Params: map[string]string{}}
		for _, p := range v.Stream.Params {
			s.Params[p.Name] = p.Value
		}
		return s, nil
	}
	if said != "" {
		return Stream{}, fmt.Errorf("the call was not connected; the caller hears: %q", said)
	}
	return Stream{}, fmt.Errorf("the TwiML opens no stream: %s", doc)
}

// Webhook posts the inbound call webhook to server (a base URL such as
// http://127.0.0.1:8080) as the carrier does, signed as opts say, and
// returns the TwiML answer.
func Webhook(ctx context.Context, client *http.Client, server, callSID, from, to string, opts Options) (string, error) {
	form := url.Values{"CallSid": {callSID}, "From": {from}, "To": {to}, "CallStatus": {"ringing"},
		"Direction": {"inbound"}, "AccountSid": {"AC" + randomHex(16)}}
	const path = "/api/telephony/inbound"
	req, err := http.NewRequestWithContext(ctx, "POST", strings.TrimSuffix(server, "/")+path, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if opts.AuthToken != "" {
		req.Header.Set("X-Twilio-Signature", twiliofake.Sign(opts.AuthToken, "https://"+opts.BotHost+path, form))
	}
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("inbound webhook: %s: %s", res.Status, body)
	}
	return string(body), nil
}

// Call is the carrier's side of one call's media stream.
type Call struct {
	CallSID, StreamSID string

	conn *websocket.Conn
	// EchoMarks echoes each mark as soon as it comes, as if the audio
	// before it had played; tests of barge-in turn it off and echo by hand.
	echoMarks bool

	wmu sync.Mutex // one writer at a time
	seq int
	ts  int64 // ms of caller audio sent

	mu         sync.Mutex
	received   []Message
	firstMedia time.Time // when the server's first media frame came
	changed    chan struct{}
	done       chan struct{}
	closeErr   error
	stopped    bool // stop was sent
}

// Message is one message the server sent the carrier.
type Message struct {
	Event   string // media, mark or clear
	Payload string // media: base64 mu-law
	Mark    string // mark: its name
}

// Options configure Open.
type Options struct {
	// Server replaces the scheme and host of the stream URL (the TwiML names
	// the public wss://BOT_HOST); empty keeps the URL.
	Server string
	// CallSID of the call; a random one when empty.
	CallSID string
	// EchoMarks: see Call.
	EchoMarks bool
	// Header is sent with the upgrade; an X-Twilio-Signature in it is sent
	// as it is (tests send bad ones).
	Header http.Header
	// AuthToken, when set, signs the webhook and the stream upgrade as the
	// carrier does (X-Twilio-Signature), for the public URLs at BotHost: the
	// server checks the URLs the carrier was given, not the one dialed.
	AuthToken, BotHost string
}

// Open connects to a stream and sends connected and start.
func Open(ctx context.Context, s Stream, opts Options) (*Call, error) {
	u, err := url.Parse(s.URL)
	if err != nil {
		return nil, fmt.Errorf("stream URL: %w", err)
	}
	if opts.Server != "" {
		srv, err := url.Parse(opts.Server)
		if err != nil {
			return nil, fmt.Errorf("server URL: %w", err)
		}
		u.Host = srv.Host
		u.Scheme = "ws"
		if srv.Scheme == "https" {
			u.Scheme = "wss"
		}
	}
	if opts.CallSID == "" {
		opts.CallSID = "CA" + randomHex(16)
	}
	header := opts.Header.Clone()
	if _, given := header["X-Twilio-Signature"]; opts.AuthToken != "" && !given {
		if header == nil {
			header = http.Header{}
		}
		header.Set("X-Twilio-Signature", twiliofake.Sign(opts.AuthToken, s.URL, url.Values{}))
	}
	conn, _, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		return nil, fmt.Errorf("open stream: %w", err)
	}
	conn.SetReadLimit(1 << 20)
	c := &Call{CallSID: opts.CallSID, StreamSID: "MZ" + randomHex(16), conn: conn, echoMarks: opts.EchoMarks,
		changed: make(chan struct{}), done: make(chan struct{})}
	if err := c.send(ctx, map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"}); err != nil {
		conn.CloseNow()
		return nil, err
	}
	start := map[string]any{"streamSid": c.StreamSID, "accountSid": "AC" + randomHex(16), "callSid": c.CallSID,
		"tracks": []string{"inbound"}, "customParameters": s.Params,
		"mediaFormat": map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}
	if err := c.sendSeq(ctx, "start", "start", start); err != nil {
		conn.CloseNow()
		return nil, err
	}
	go c.read()
	return c, nil
}

// Inbound places an inbound call: the webhook, then the stream it names.
func Inbound(ctx context.Context, client *http.Client, server, from, to string, opts Options) (*Call, error) {
	if opts.CallSID == "" {
		opts.CallSID = "CA" + randomHex(16)
	}
	if opts.Server == "" {
		opts.Server = server
	}
	doc, err := Webhook(ctx, client, server, opts.CallSID, from, to, opts)
	if err != nil {
		return nil, err
	}
	s, err := ParseTwiML(doc)
	if err != nil {
		return nil, err
	}
	return Open(ctx, s, opts)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
