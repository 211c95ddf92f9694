package app

import (
	"context"
	"net"
	"net/http"

	"github.com/agentline/agentline/internal/httpx"
	"github.com/agentline/agentline/internal/telephony/callsim"
	phonecarrier "github.com/agentline/agentline/internal/telephony/carrier"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

// sandboxCarrier is the carrier of --sandbox with no carrier account:
// an in-process fake Twilio sells pretend numbers, so that a number can be
// linked and called with `agentline call`, which signs its
// requests with the same token. It also plays the outbound calls it is
// asked to place (before, they stayed queued): they ring, a pretend
// callee answers on this server's media stream, hears the agent's
// greeting, says something and hangs up, with the status callbacks a
// real carrier sends. Who answers goes by the last digit of the number
// (twiliofake.ByLastDigit), so that a campaign's every outcome can be
// tried on a laptop: 7 an answering machine (callsim.Machine: a greeting,
// a beep, and machine detection's verdict when asked), 8 a busy line, 9
// nobody, anything else a person. token is TWILIO_AUTH_TOKEN; the one
// returned, which the signatures are checked with, is it when set, else
// the published twiliofake.SandboxAuthToken.
func (a *App) sandboxCarrier(token string) (phonecarrier.Carrier, string, error) {
	if token == "" {
		token = twiliofake.SandboxAuthToken
	}
	server := a.loopbackURL()
	f := twiliofake.New(twiliofake.Options{AuthToken: token, Play: &twiliofake.Play{
		Server: server,
		Answer: func(ctx context.Context, c twiliofake.Call) error {
			answer := callsim.Callee
			if c.Pickup == twiliofake.PickupMachine {
				answer = callsim.Machine
			}
			err := answer(ctx, c.Twiml, callsim.Options{Server: server, CallSID: c.SID, AuthToken: token})
			if err != nil {
				a.logger.Warn("sandbox carrier: the pretend callee could not talk", "call_sid", c.SID, "err", err)
			}
			return err
		},
	}})
	a.closers = append(a.closers, closeFunc(f.Close))
	a.sandboxPhone = f
	t, err := phonecarrier.NewTwilio(phonecarrier.TwilioConfig{AccountSID: f.AccountSID(), AuthToken: f.AuthToken(), BaseURL: f.URL(), Timeout: a.Config.TwilioTimeout})
	if err != nil {
		return nil, "", err
	}
	a.logger.Warn("sandbox carrier on: phone numbers are bought from a pretend Twilio; call them with `agentline call`")
	return t, token, nil
}

// loopbackURL is this server's own address, where the sandbox's carrier
// sends its webhooks and opens its streams: BOT_HOST and
// AGENTLINE_PUBLIC_URL name the public host, which may not lead back here.
func (a *App) loopbackURL() string {
	host, port, err := net.SplitHostPort(a.Config.Addr)
	if err != nil {
		return a.Config.BaseURL()
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// sandboxPhoneRoutes serve what a simulator needs to sign like the
// sandbox's carrier: `agentline call` run in another shell rarely has the
// server's BOT_HOST. Only the sandbox serves it; the host is
// public anyway (it is in every TwiML answer), and a token of the
// server's own is never given out, only whether the published sandbox
// token is in use.
func (a *App) sandboxPhoneRoutes() []httpx.Route {
	return []httpx.Route{{Method: "GET", Pattern: callsim.SandboxInfoPath, Auth: httpx.Public,
		Name: httpx.NameOf(a.sandboxSigning), Handler: httpx.HandlerFunc(a.sandboxSigning)}}
}

// GET /sandbox/telephony
func (a *App) sandboxSigning(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, callsim.SandboxInfo{BotHost: a.Config.BotHost, SandboxToken: a.Config.TwilioAuthToken == ""})
	return nil
}
