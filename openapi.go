package agentline

import _ "embed"

// OpenAPI is docs/openapi.yaml, served at GET /api/openapi.yaml.
//
//go:embed docs/openapi.yaml
var OpenAPI []byte
