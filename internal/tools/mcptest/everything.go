package mcptest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// everythingPkg is the reference MCP server on npm.
const everythingPkg = "@modelcontextprotocol/server-everything"

// loopbackOnly makes Node's listen default to 127.0.0.1: the reference
// server listens on every interface otherwise.
const loopbackOnly = `data:text/javascript,import net from "node:net";` +
	`const listen = net.Server.prototype.listen;` +
	`net.Server.prototype.listen = function (...a) { if (typeof a[0] === "number" || typeof a[0] === "string") a.splice(1, 0, "127.0.0.1"); return listen.apply(this, a); };`

// StartEverything runs the reference MCP server from npm
// (@modelcontextprotocol/server-everything, which .ci/run installs pinned
// into .cache/node; AGENTLINE_NODE_MODULES overrides the directory) over
// streamable HTTP on a free loopback port, and returns its endpoint.
// Without the package the test is skipped, unless AGENTLINE_REQUIRE_NODE=1
// makes that a failure.
func StartEverything(t testing.TB) string {
	t.Helper()
	dir := nodeModules(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", "--import", loopbackOnly,
		filepath.Join(dir, everythingPkg, "dist", "index.js"), "streamableHttp")
	cmd.Env = append(cmd.Environ(), "PORT="+port)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("node: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if i == 200 {
			t.Fatalf("server-everything did not listen on %s", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://127.0.0.1:" + port + "/mcp"
}

// nodeModules finds the tests' node_modules: AGENTLINE_NODE_MODULES, or
// .cache/node/node_modules at the module's root.
func nodeModules(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("AGENTLINE_NODE_MODULES")
	if dir == "" {
		wd, _ := os.Getwd()
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, ".cache", "node", "node_modules")
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, everythingPkg, "package.json")); err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_NODE") == "1" {
			t.Fatalf("AGENTLINE_REQUIRE_NODE=1 but no %s in %s (.ci/run installs it)", everythingPkg, dir)
		}
		t.Skipf("no %s in %s (.ci/run installs it); AGENTLINE_REQUIRE_NODE=1 makes this a failure", everythingPkg, dir)
	}
	return dir
}
