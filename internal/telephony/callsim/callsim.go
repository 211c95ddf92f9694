// Package callsim plays the carrier's side of a phone call against a
// running agentline: it posts the inbound webhook like Twilio, opens the
// media stream the TwiML names with its parameters, and speaks the Media
// Streams protocol (connected, start, media, mark, dtmf, stop) over a
// WebSocket. `agentline call` and the end-to-end tests use it.
package callsim

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
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

func (c *Call) send(ctx context.Context, msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return c.conn.Write(ctx, websocket.MessageText, b)
}

// sendSeq sends an event with the next sequence number, as Twilio numbers
// every message after connected.
func (c *Call) sendSeq(ctx context.Context, event, key string, body any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.seq++
	msg := map[string]any{"event": event, "sequenceNumber": strconv.Itoa(c.seq), "streamSid": c.StreamSID}
	if key != "" {
		msg[key] = body
	}
	return c.send(ctx, msg)
}

// SendMedia sends one frame of caller audio (raw mu-law bytes).
func (c *Call) SendMedia(ctx context.Context, mulaw []byte) error {
	return c.SendPayload(ctx, base64.StdEncoding.EncodeToString(mulaw))
}

// SendPayload sends one frame of caller audio already base64-encoded.
func (c *Call) SendPayload(ctx context.Context, payload string) error {
	c.wmu.Lock()
	ts := c.ts
	n, _ := base64.StdEncoding.DecodeString(payload)
	c.ts += int64(len(n) / 8)
	chunk := c.seq
	c.wmu.Unlock()
	return c.sendSeq(ctx, "media", "media", map[string]string{"track": "inbound", "chunk": strconv.Itoa(chunk),
		"timestamp": strconv.FormatInt(ts, 10), "payload": payload})
}

// Play sends audio as 20 ms frames; paced, at the rate a phone line carries
// them.
func (c *Call) Play(ctx context.Context, mulaw []byte, paced bool) error {
	var tick *time.Ticker
	if paced {
		tick = time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
	}
	for off := 0; off < len(mulaw); off += FrameBytes {
		if err := c.SendMedia(ctx, mulaw[off:min(off+FrameBytes, len(mulaw))]); err != nil {
			return err
		}
		if tick != nil {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// SendDTMF sends a keypad digit.
func (c *Call) SendDTMF(ctx context.Context, digit string) error {
	return c.sendSeq(ctx, "dtmf", "dtmf", map[string]string{"track": "inbound_track", "digit": digit})
}

// EchoMark sends back a mark, as the carrier does once the audio before it
// has played (or was cleared).
func (c *Call) EchoMark(ctx context.Context, name string) error {
	return c.sendSeq(ctx, "mark", "mark", map[string]string{"name": name})
}

// Stop sends stop, as the carrier does when the caller hangs up.
func (c *Call) Stop(ctx context.Context) error {
	return c.sendSeq(ctx, "stop", "stop", map[string]string{"callSid": c.CallSID})
}

// Close closes the socket without a stop, as a dropped connection would.
func (c *Call) Close() error { return c.conn.CloseNow() }

func (c *Call) read() {
	defer close(c.done)
	for {
		_, b, err := c.conn.Read(context.Background())
		if err != nil {
			c.mu.Lock()
			c.closeErr = err
			c.mu.Unlock()
			return
		}
		var m struct {
			Event string `json:"event"`
			Media struct {
				Payload string `json:"payload"`
			} `json:"media"`
			Mark struct {
				Name string `json:"name"`
			} `json:"mark"`
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		msg := Message{Event: m.Event, Payload: m.Media.Payload, Mark: m.Mark.Name}
		c.mu.Lock()
		if msg.Event == "media" && c.firstMedia.IsZero() {
			c.firstMedia = time.Now()
		}
		c.received = append(c.received, msg)
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
		if m.Event == "mark" && c.echoMarks {
			c.EchoMark(context.Background(), m.Mark.Name)
		}
	}
}

// Received returns the messages the server sent so far.
func (c *Call) Received() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.received...)
}

// Audio returns the agent's audio received so far, as mu-law bytes.
func (c *Call) Audio() []byte {
	var out []byte
	for _, m := range c.Received() {
		if m.Event == "media" {
			b, _ := base64.StdEncoding.DecodeString(m.Payload)
			out = append(out, b...)
		}
	}
	return out
}

// WaitFor waits until a received message satisfies match, and returns its
// index in Received.
func (c *Call) WaitFor(ctx context.Context, match func(Message) bool) (int, error) {
	seen := 0
	for {
		c.mu.Lock()
		for ; seen < len(c.received); seen++ {
			if match(c.received[seen]) {
				c.mu.Unlock()
				return seen, nil
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-c.done:
			return 0, errStreamClosed
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// errStreamClosed: the server closed the stream before what was awaited.
var errStreamClosed = errors.New("the stream closed before the message came")

// Done is closed when the server has closed the stream.
func (c *Call) Done() <-chan struct{} { return c.done }

// CloseStatus is the WebSocket close status the server sent, or -1.
func (c *Call) CloseStatus() websocket.StatusCode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return websocket.CloseStatus(c.closeErr)
}

// CloseReason is the reason the server's close frame carried, or "".
func (c *Call) CloseReason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ce websocket.CloseError
	if errors.As(c.closeErr, &ce) {
		return ce.Reason
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
