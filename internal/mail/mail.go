// Package mail sends agentline's few emails (invitations, password reset
// links) through an SMTP server named by AGENTLINE_SMTP_URL: smtp://
// with STARTTLS when the server offers it, smtps:// with TLS from the
// first byte, AUTH PLAIN when the URL holds a user. The standard library's
// net/smtp speaks the protocol; this package builds the message and keeps
// every header free of what a user typed.
package mail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// Config is where and as whom mail is sent.
type Config struct {
	// URL is smtp://[user:pass@]host[:port] (port 587 by default) or
	// smtps://[user:pass@]host[:port] (465).
	URL string
	// From is the sender, an address with an optional name
	// ("agentline <noreply@example.com>").
	From string
	// TLS, when set, is the TLS configuration to use instead of the
	// system's (tests trust their own server's certificate with it).
	TLS *tls.Config
	// Timeout bounds one message's whole exchange (default 30 s).
	Timeout time.Duration
}

// Check reports what is wrong with c, naming the settings.
func (c Config) Check() error {
	_, err := c.parse()
	return err
}

type endpoint struct {
	implicitTLS bool
	host, addr  string
	user, pass  string
	hasUser     bool
	from        *mail.Address
}

func (c Config) parse() (endpoint, error) {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return endpoint{}, errors.New("AGENTLINE_SMTP_URL must look like smtp://user:pass@host:587 or smtps://user:pass@host:465")
	}
	e := endpoint{implicitTLS: u.Scheme == "smtps", host: u.Hostname()}
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "465", false: "587"}[e.implicitTLS]
	}
	e.addr = net.JoinHostPort(e.host, port)
	if u.User != nil {
		e.user, e.hasUser = u.User.Username(), true
		e.pass, _ = u.User.Password()
	}
	if e.from, err = mail.ParseAddress(c.From); err != nil {
		return endpoint{}, fmt.Errorf("AGENTLINE_MAIL_FROM must be an address such as \"agentline <noreply@example.com>\": %w", err)
	}
	return e, nil
}

// Message is one plain-text email.
type Message struct {
	To      string
	Subject string
	Text    string
}

// Sender sends messages through the configured server.
type Sender struct {
	cfg Config
	ep  endpoint
}

// New checks cfg and returns its Sender.
func New(cfg Config) (*Sender, error) {
	ep, err := cfg.parse()
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	return &Sender{cfg: cfg, ep: ep}, nil
}

// Send delivers m to the SMTP server: one connection per message, which
// for a handful of account emails is simpler than holding one open.
func (s *Sender) Send(ctx context.Context, m Message) error {
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return fmt.Errorf("mail to %q: %w", m.To, err)
	}
	data, err := compose(s.ep.from, to, m, time.Now())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	c, err := s.dial(ctx)
	if err != nil {
		return fmt.Errorf("mail: connect to %s: %w", s.ep.addr, err)
	}
	defer c.Close()
	if err := s.deliver(c, to.Address, data); err != nil {
		return fmt.Errorf("mail: send to %s through %s: %w", to.Address, s.ep.addr, err)
	}
	return nil
}

func (s *Sender) tlsConfig() *tls.Config {
	if s.cfg.TLS != nil {
		c := s.cfg.TLS.Clone()
		if c.ServerName == "" {
			c.ServerName = s.ep.host
		}
		return c
	}
	return &tls.Config{ServerName: s.ep.host, MinVersion: tls.VersionTLS12}
}

func (s *Sender) dial(ctx context.Context) (*smtp.Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.ep.addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if s.ep.implicitTLS {
		tc := tls.Client(conn, s.tlsConfig())
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.ep.host)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

func (s *Sender) deliver(c *smtp.Client, to string, data []byte) error {
	if err := c.Hello(helloName(s.ep.from.Address)); err != nil {
		return err
	}
	if ok, _ := c.Extension("STARTTLS"); ok && !s.ep.implicitTLS {
		if err := c.StartTLS(s.tlsConfig()); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	}
	if s.ep.hasUser {
		// net/smtp's PLAIN refuses to send the password unencrypted to
		// anything but loopback.
		if err := c.Auth(smtp.PlainAuth("", s.ep.user, s.ep.pass, s.ep.host)); err != nil {
			return fmt.Errorf("AUTH: %w", err)
		}
	}
	if err := c.Mail(s.ep.from.Address); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// helloName is the name agentline greets the server with: the sender's
// domain, which is at least a name the operator chose.
func helloName(from string) string {
	if i := strings.LastIndexByte(from, '@'); i >= 0 && i < len(from)-1 {
		return from[i+1:]
	}
	return "localhost"
}

// compose writes the message with CRLF line ends. The subject is
// Q-encoded and stripped of control characters, so a project name cannot
// add a header; the body is quoted-printable UTF-8.
func compose(from, to *mail.Address, m Message, now time.Time) ([]byte, error) {
	var id [12]byte
	rand.Read(id[:])
	var b strings.Builder
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", from.String())
	header("To", to.String())
	header("Subject", mime.QEncoding.Encode("utf-8", oneLine(m.Subject)))
	header("Date", now.UTC().Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(id[:])+"@"+helloName(from.Address)+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	text := strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n", "\r\n")
	if _, err := qp.Write([]byte(text)); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
