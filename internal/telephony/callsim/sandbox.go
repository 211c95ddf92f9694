package callsim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// SandboxInfoPath is where a server in sandbox mode says how the carrier's
// requests to it are signed (GET, public, served only with --sandbox).
const SandboxInfoPath = "/sandbox/telephony"

// SandboxInfo is what a sandbox says about its carrier's signatures: the
// host the signed URLs name (BOT_HOST) and whether its token is the
// published twiliofake.SandboxAuthToken (else it is the server's own
// TWILIO_AUTH_TOKEN, which is never given out).
type SandboxInfo struct {
	BotHost      string `json:"bot_host"`
	SandboxToken bool   `json:"sandbox_token"`
}

// AskSandbox asks the server at base how its sandbox carrier signs. ok is
// false, with no error, when the server runs no sandbox (404): a real
// deployment says nothing, and the caller signs with its own settings.
func AskSandbox(ctx context.Context, client *http.Client, base string) (info SandboxInfo, ok bool, err error) {
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(base, "/")+SandboxInfoPath, nil)
	if err != nil {
		return info, false, err
	}
	res, err := client.Do(req)
	if err != nil {
		return info, false, err
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusNotFound:
		return info, false, nil
	case res.StatusCode != http.StatusOK:
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<12))
		return info, false, fmt.Errorf("%s: %s: %s", SandboxInfoPath, res.Status, body)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&info); err != nil {
		return info, false, fmt.Errorf("%s: %w", SandboxInfoPath, err)
	}
	return info, true, nil
}
