package relay_test

// The Node.js pass-through relay the load run can measure agentline's relay
// against (the Go floors are relayload.PassThrough).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nodeRelay is the Node.js pass-through relay the "node" mode runs: the
// same two sockets as the floor, with the ws package (what Twilio's Node
// sample relay uses), each message forwarded as it is.
const nodeRelay = `const http = require("http");
const { WebSocketServer, WebSocket } = require("ws");
const server = http.createServer();
const wss = new WebSocketServer({ server, perMessageDeflate: false });
wss.on("connection", (carrier) => {
  const model = new WebSocket(process.env.RELAYLOAD_MODEL_WS, { headers: { Authorization: "Bearer " + process.env.RELAYLOAD_KEY }, perMessageDeflate: false });
  const early = [];
  carrier.on("message", (data, isBinary) => {
    if (model.readyState === WebSocket.OPEN) model.send(data, { binary: isBinary });
    else early.push([data, isBinary]);
  });
  model.on("open", () => { for (const [d, b] of early) model.send(d, { binary: b }); early.length = 0; });
  model.on("message", (data, isBinary) => { if (carrier.readyState === WebSocket.OPEN) carrier.send(data, { binary: isBinary }); });
  const close = () => { carrier.terminate(); model.terminate(); };
  carrier.on("close", close); model.on("close", close); carrier.on("error", close); model.on("error", close);
});
server.listen(0, "127.0.0.1", () => console.log("ADDR 127.0.0.1:" + server.address().port));
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
`

// installNodeRelay writes the Node relay into a temp dir and installs ws
// there from the npm registry (never committed), returning the script.
func installNodeRelay(b *testing.B) string {
	dir := b.TempDir()
	script := filepath.Join(dir, "relay.js")
	if err := os.WriteFile(script, []byte(nodeRelay), 0o644); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", "ws@8").CombinedOutput()
	if err != nil {
		b.Fatalf("npm install ws: %v\n%s", err, out)
	}
	version, err := exec.Command("node", "-e", `console.log(process.version + " ws " + require(process.argv[1] + "/node_modules/ws/package.json").version)`, dir).Output()
	if err != nil {
		b.Fatalf("node: %v", err)
	}
	b.Logf("node relay: %s", strings.TrimSpace(string(version)))
	return script
}
