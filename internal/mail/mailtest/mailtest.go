// Package mailtest runs a real SMTP server on loopback for tests (the
// server of github.com/emersion/go-smtp), keeping every message it
// receives, so that mail is tested against an independent implementation
// of the protocol rather than a stand-in for agentline's sender.
package mailtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server received.
type Message struct {
	From    string
	To      []string
	Subject string
	// Text is the decoded body.
	Text string
	Raw  []byte
	// TLS tells whether the session was encrypted when it was sent.
	TLS bool
	// User is the name the client authenticated as, if any.
	User string
}

// Options shape the server.
type Options struct {
	// TLS makes the server offer STARTTLS with a certificate for 127.0.0.1
	// that the Server's RootCAs trusts.
	TLS bool
	// User and Password, when set, are the only credentials AUTH PLAIN
	// accepts, and mail is refused without them.
	User, Password string
	// Addr is where to listen (default: a free loopback port).
	Addr string
}

// Server is a running SMTP server.
type Server struct {
	// Addr is host:port on loopback.
	Addr string
	// RootCAs trusts the server's certificate (with Options.TLS).
	RootCAs *x509.CertPool
	opts    Options
	mu      sync.Mutex
	msgs    []Message
	arrived chan struct{}
}

// Start runs a server until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, arrived: make(chan struct{}, 1000)}
	srv := smtp.NewServer(s)
	srv.Domain = "127.0.0.1"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.AllowInsecureAuth = !opts.TLS
	if opts.TLS {
		cert, pool := selfSigned(t)
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		s.RootCAs = pool
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// URL is the server's AGENTLINE_SMTP_URL, with the credentials of Options.
func (s *Server) URL() string {
	if s.opts.User != "" {
		return "smtp://" + s.opts.User + ":" + s.opts.Password + "@" + s.Addr
	}
	return "smtp://" + s.Addr
}

// Messages returns what arrived so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait returns once n messages have arrived, or fails the test after d.
func (s *Server) Wait(t testing.TB, n int, d time.Duration) []Message {
	t.Helper()
	deadline := time.After(d)
	for {
		if m := s.Messages(); len(m) >= n {
			return m
		}
		select {
		case <-s.arrived:
		case <-deadline:
			t.Fatalf("mailtest: %d of %d messages arrived within %s", len(s.Messages()), n, d)
		}
	}
}

// NewSession is go-smtp's Backend.
func (s *Server) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{s: s, conn: c}, nil
}

type session struct {
	s    *Server
	conn *smtp.Conn
	user string
	msg  Message
}

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != ss.s.opts.User || pass != ss.s.opts.Password || user == "" {
			return errors.New("invalid credentials")
		}
		ss.user = user
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.User != "" && ss.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	ss.msg = Message{From: from, User: ss.user}
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.msg.To = append(ss.msg.To, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m := ss.msg
	m.Raw = raw
	_, m.TLS = ss.conn.TLSConnectionState()
	if pm, err := mail.ReadMessage(strings.NewReader(string(raw))); err == nil {
		m.Subject, _ = new(mime.WordDecoder).DecodeHeader(pm.Header.Get("Subject"))
		var body io.Reader = pm.Body
		if strings.EqualFold(pm.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(pm.Body)
		}
		text, _ := io.ReadAll(body)
		m.Text = strings.ReplaceAll(string(text), "\r\n", "\n")
	}
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, m)
	ss.s.mu.Unlock()
	ss.s.arrived <- struct{}{}
	return nil
}

func (ss *session) Reset()        { ss.msg = Message{} }
func (ss *session) Logout() error { return nil }

func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailtest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}
