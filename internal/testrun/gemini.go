package testrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// geminiSession plays a Gemini-kind agent's side with generateContent
// (POST {base}/v1beta/models/{model}:generateContent) in place of the Live
// API's text modality: the agent's instructions as systemInstruction, its
// tools as functionDeclarations (parametersJsonSchema), the conversation
// so far as contents, each functionCall part run through the tool
// facility and answered with a functionResponse part. The model is the
// deployment's Gemini text model (a Live model does not serve
// generateContent).
type geminiSession struct {
	hc       *http.Client
	url, key string
	agent    agentline.Agent
	tools    ToolRunner
	system   string
	decls    []map[string]any
	contents []map[string]any
}

func newGeminiSession(ctx context.Context, hc *http.Client, creds agentline.ProviderCredentials, agent agentline.Agent, model string,
	vars map[string]string, tools ToolRunner) (*geminiSession, error) {
	defs, err := tools.Definitions(ctx, agent)
	if err != nil {
		return nil, err
	}
	g := &geminiSession{hc: hc, key: creds.APIKey, agent: agent, tools: tools, system: agentline.FillVariables(agent.Instructions, vars),
		url: strings.TrimSuffix(creds.BaseURL, "/") + "/v1beta/models/" + url.PathEscape(model) + ":generateContent"}
	for _, d := range defs {
		g.decls = append(g.decls, map[string]any{"name": d.Name, "description": d.Description, "parametersJsonSchema": d.Parameters})
	}
	return g, nil
}

func (g *geminiSession) Close() {}

type geminiPart struct {
	Text         string `json:"text,omitempty"`
	FunctionCall *struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall,omitempty"`
}

// Turn sends the person's message and returns the agent's answer with the
// tool calls it made on the way.
func (g *geminiSession) Turn(ctx context.Context, text string) (string, []agentline.ToolUse, error) {
	g.contents = append(g.contents, map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}})
	var uses []agentline.ToolUse
	for rounds := 0; rounds <= maxToolRounds; rounds++ {
		parts, err := g.generate(ctx)
		if err != nil {
			return "", uses, err
		}
		g.contents = append(g.contents, map[string]any{"role": "model", "parts": parts})
		var answer strings.Builder
		var responses []any
		for i, p := range parts {
			if p.FunctionCall == nil {
				answer.WriteString(p.Text)
				continue
			}
			call := agentline.ToolCall{CallID: fmt.Sprintf("call_%d_%d", rounds, i), Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Args}
			start := time.Now()
			res, err := g.tools.Execute(ctx, g.agent, call)
			if err != nil {
				return "", uses, err
			}
			ms := time.Since(start).Milliseconds()
			uses = append(uses, agentline.ToolUse{CallID: call.CallID, Name: call.Name, Arguments: call.Arguments, Result: res.Output,
				IsError: res.IsError, DurationMS: &ms, At: start.UTC()})
			responses = append(responses, map[string]any{"functionResponse": map[string]any{"name": call.Name,
				"response": map[string]any{"output": res.Output}}})
		}
		if len(responses) == 0 {
			return answer.String(), uses, nil
		}
		g.contents = append(g.contents, map[string]any{"role": "user", "parts": responses})
	}
	return "", uses, fmt.Errorf("the agent called tools more than %d times in one turn", maxToolRounds)
}

// generate asks for the model's next content.
func (g *geminiSession) generate(ctx context.Context) ([]geminiPart, error) {
	body := map[string]any{"systemInstruction": map[string]any{"parts": []any{map[string]any{"text": g.system}}}, "contents": g.contents}
	if len(g.decls) > 0 {
		body["tools"] = []any{map[string]any{"functionDeclarations": g.decls}}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", g.key)
	resp, err := g.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the agent's model: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("the agent's model: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the agent's model answered %s", resp.Status)
	}
	var out struct {
		Candidates []struct {
			Content struct {
				Parts []geminiPart `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.Candidates) == 0 {
		return nil, fmt.Errorf("the agent's model gave no candidate")
	}
	return out.Candidates[0].Content.Parts, nil
}
