package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/agentline/agentline/internal/telephony/callsim"
	"github.com/agentline/agentline/internal/telephony/twiliofake"
)

const callUsage = "usage: agentline call --to +1NUMBER [--from +1NUMBER] [--server http://127.0.0.1:8080] [--in caller.wav] [--out agent.wav] [--listen 5s] [--auth-token TOKEN] [--bot-host HOST]"

// call simulates a phone call against a running server: it posts the
// inbound webhook as the carrier would, opens the media stream the TwiML
// names, plays a WAV file as 20 ms mu-law frames in real time, and writes
// what the agent said to another WAV file. It signs its requests as the
// carrier does, with the server's TWILIO_AUTH_TOKEN (or the sandbox's), since
// the server checks them in every environment; a sandbox tells it which
// host and token (askSandbox).
func call(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("agentline call", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", "http://127.0.0.1:8080", "base URL of the running agentline")
	to := fs.String("to", "", "the agent's phone number to call (E.164)")
	from := fs.String("from", "+15555550100", "the caller's number (E.164)")
	in := fs.String("in", "", "WAV file the caller says: 8 kHz mono, mu-law or 16-bit PCM (default: 2 s of silence)")
	out := fs.String("out", "agent.wav", "WAV file to write what the agent said to (8 kHz mu-law)")
	listen := fs.Duration("listen", 5*time.Second, "how long to keep listening after the caller's audio has played")
	token := fs.String("auth-token", orDefault(getenv("TWILIO_AUTH_TOKEN"), twiliofake.SandboxAuthToken), "the server's carrier auth token, to sign requests with (env TWILIO_AUTH_TOKEN; default: the sandbox's)")
	botHost := fs.String("bot-host", getenv("BOT_HOST"), "the server's BOT_HOST, whose URLs the carrier signs (env BOT_HOST)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w\n%s", err, callUsage)
	}
	if *to == "" || fs.NArg() > 0 {
		return errors.New(callUsage)
	}
	audio := bytes.Repeat([]byte{0xFF}, 2*8000) // 2 s of mu-law silence
	if *in != "" {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		audio, err = callsim.ReadWAV(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *in, err)
		}
	}
	client := &http.Client{Timeout: 15 * time.Second}
	if err := askSandbox(ctx, client, fs, *server, token, botHost); err != nil {
		return err
	}
	c, err := callsim.Inbound(ctx, client, *server, *from, *to, callsim.Options{EchoMarks: true, AuthToken: *token, BotHost: *botHost})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(stdout, "call %s connected; playing %.1f s of caller audio\n", c.CallSID, float64(len(audio))/8000)
	if err := c.Play(ctx, audio, true); err != nil {
		return fmt.Errorf("the stream ended while the caller spoke: %w", err)
	}
	select {
	case <-time.After(*listen):
		c.Stop(ctx)
	case <-c.Done():
		fmt.Fprintln(stdout, "the agent hung up")
	case <-ctx.Done():
	}
	said := c.Audio()
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := callsim.WriteWAV(f, said); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %.1f s of the agent's audio to %s\n", float64(len(said))/8000, *out)
	return nil
}

// askSandbox learns, from a server in sandbox mode, the host its carrier
// signs for and whether its token is the sandbox's, for each of
// --bot-host and --auth-token not given on the command line: in the
// sandbox the server's word beats the shell's environment, where BOT_HOST
// is often unset or set for another server. A real deployment
// has no sandbox to ask, and the flags stand.
func askSandbox(ctx context.Context, client *http.Client, fs *flag.FlagSet, server string, token, botHost *string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["bot-host"] && given["auth-token"] {
		return nil
	}
	info, ok, err := callsim.AskSandbox(ctx, client, server)
	if err != nil {
		return fmt.Errorf("ask %s how it signs: %w", server, err)
	}
	if !ok {
		return nil
	}
	if !given["bot-host"] {
		*botHost = info.BotHost
	}
	if !given["auth-token"] && info.SandboxToken {
		*token = twiliofake.SandboxAuthToken
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
