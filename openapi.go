package agentline

import _ "embed"

//go:embed docs/openapi.yaml
var openAPI string

// OpenAPI returns docs/openapi.yaml, served at GET /api/openapi.yaml. The
// document is embedded as a string, which nothing can change; each call
// returns a fresh copy of its bytes.
func OpenAPI() []byte { return []byte(openAPI) }
