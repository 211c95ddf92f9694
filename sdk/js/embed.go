// Package jssdk holds the source of @agentline/client, the browser SDK of
// agentline's public widget API, for agentline to bundle at start: the
// widget script (/chat-widget.js) is built from it, and /sdk/client.js
// serves it as one ES module. The directory is also the npm package
// (package.json, index.d.ts), so a bundler can import it from here.
package jssdk

import "embed"

// Files are the SDK's ES modules; index.js is the entry.
//
//go:embed index.js errors.js openai.js gemini.js
var Files embed.FS
