package analysis_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/store/storetest"
)

// A widget conversation of an OpenAI-kind agent is analysed through the
// Responses API fake, a phone call of another through the Gemini
// generateContent fake; a silent conversation is skipped. Each done
// analysis reaches the webhook endpoint as conversation.analyzed, verified
// by the official Standard Webhooks library; the list filters on the
// outcome and analytics counts the success rate.
func TestConversationsAreAnalysed(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			f := newFixture(t, d, nil)
			gemini := f.agent(t, "gemini-2.5-flash-native-audio-preview-09-2025")
			openai := f.agent(t, "gpt-realtime") // the widget channel's agent

			web := f.widgetConversation(t, openai, "My order id is A-17, call me back?", "Thanks")
			silent := f.widgetConversation(t, openai)
			phone := f.phoneConversation(t, gemini, "CA1", "Where is parcel B-2?")

			checkDone(t, f.waitAnalysis(t, web), "My order id is A-17, call me back?", "gpt-4.1-mini")
			checkDone(t, f.waitAnalysis(t, phone), "Where is parcel B-2?", "gemini-2.5-flash")
			if s := f.waitAnalysis(t, silent).Analysis; s.Status != agentline.AnalysisSkipped || s.Summary != "" || s.Success != nil {
				t.Fatalf("silent: %+v", s)
			}

			// What the fakes were sent: one request each, in each API's shape.
			reqs := f.fake.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d provider requests, want 2 (the silent one is never sent)", len(reqs))
			}
			paths := []string{reqs[0].Path, reqs[1].Path}
			slices.Sort(paths)
			if paths[0] != "/v1/responses" || paths[1] != "/v1beta/models/gemini-2.5-flash:generateContent" {
				t.Fatalf("paths %v", paths)
			}
			for _, r := range reqs {
				var body struct {
					Text struct {
						Format struct {
							Type   string `json:"type"`
							Strict bool   `json:"strict"`
						} `json:"format"`
					} `json:"text"`
					GenerationConfig struct {
						ResponseMimeType   string          `json:"responseMimeType"`
						ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
					} `json:"generationConfig"`
				}
				json.Unmarshal(r.Body, &body)
				okOpenAI := body.Text.Format.Type == "json_schema" && body.Text.Format.Strict
				okGemini := body.GenerationConfig.ResponseMimeType == "application/json" && len(body.GenerationConfig.ResponseJSONSchema) > 0
				if !okOpenAI && !okGemini {
					t.Fatalf("request %s: %s", r.Path, r.Body)
				}
			}

			// conversation.analyzed, once per done analysis, verified.
			var got map[string]agentline.AnalysisEventData
			for range 3000 {
				headers, bodies := f.hooks.all()
				got = map[string]agentline.AnalysisEventData{}
				wh, _ := standardwebhooks.NewWebhook(f.secret)
				for i, b := range bodies {
					if err := wh.Verify(b, headers[i]); err != nil {
						t.Fatalf("delivery %d does not verify: %v", i, err)
					}
					var env struct {
						Type string                      `json:"type"`
						Data agentline.AnalysisEventData `json:"data"`
					}
					json.Unmarshal(b, &env)
					if env.Type != agentline.EventConversationAnalyzed {
						t.Fatalf("event %s", b)
					}
					if _, dup := got[env.Data.ConversationID]; dup {
						t.Fatalf("two events for %s", env.Data.ConversationID)
					}
					got[env.Data.ConversationID] = env.Data
				}
				if len(got) >= 2 {
					break
				}
				waitABit()
			}
			if len(got) != 2 || got[web].Success == nil || !*got[web].Success || !strings.Contains(string(got[phone].Data), "order_id") ||
				got[web].Summary == "" || got[phone].AgentID != gemini.ID {
				t.Fatalf("events: %+v", got)
			}

			base := "/api/projects/" + itoa(f.project) + "/conversations"
			for q, want := range map[string][]string{
				"?analysis_status=done": {web, phone}, "?analysis_status=skipped": {silent}, "?success=true": {web, phone},
				"?success=false": {}, "?analysis_status=failed": {},
			} {
				var list struct{ Conversations []agentline.Conversation }
				f.s.Must(t, 200, "GET", base+q, f.tok, nil, &list)
				var ids []string
				for _, c := range list.Conversations {
					ids = append(ids, c.ID)
				}
				slices.Sort(ids)
				slices.Sort(want)
				if !slices.Equal(ids, want) {
					t.Fatalf("%s: %v, want %v", q, ids, want)
				}
			}
			f.s.Must(t, 400, "GET", base+"?analysis_status=maybe", f.tok, nil, nil)
			f.s.Must(t, 400, "GET", base+"?success=yes", f.tok, nil, nil)

			var an struct {
				Conversations struct {
					Totals struct {
						Conversations, Evaluated, Successes int64
						SuccessRate                         *float64 `json:"success_rate"`
					}
				}
			}
			f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project)+"/analytics", f.tok, nil, &an)
			tot := an.Conversations.Totals
			if tot.Conversations != 3 || tot.Evaluated != 2 || tot.Successes != 2 || tot.SuccessRate == nil || *tot.SuccessRate != 1 {
				t.Fatalf("analytics totals %+v", tot)
			}
			csv := f.s.Must(t, 200, "GET", "/api/projects/"+itoa(f.project)+"/analytics.csv", f.tok, nil, nil)
			if !strings.Contains(string(csv.Body), ",evaluated,successes,success_rate\n") || !strings.Contains(string(csv.Body), ",1,1,1.000\n") {
				t.Fatalf("csv:\n%s", csv.Body)
			}
		})
	}
}

// A provider that keeps failing (503) fails the analysis after the set
// attempts, with the reason; one that fails twice and then answers ends
// done on the third attempt; one that refuses the request (400) fails it
// at once. Nothing failed reaches the webhook endpoint.
func TestAnalysisRetriesThenFails(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			f := newFixture(t, d, nil)
			a := f.agent(t, "gpt-realtime")

			f.fake.Fail(-1, http.StatusServiceUnavailable)
			failed := f.waitAnalysis(t, f.widgetConversation(t, a, "Hello?")).Analysis
			if failed.Status != agentline.AnalysisFailed || failed.Attempts != 3 || !strings.Contains(failed.Error, "503") ||
				failed.FinishedAt == nil || failed.Summary != "" {
				t.Fatalf("failed: %+v", failed)
			}
			if n := len(f.fake.Requests()); n != 3 {
				t.Fatalf("%d requests, want 3", n)
			}

			f.fake.Fail(2, http.StatusTooManyRequests)
			third := f.waitAnalysis(t, f.widgetConversation(t, a, "Second try"))
			if third.Analysis.Status != agentline.AnalysisDone || third.Analysis.Attempts != 3 {
				t.Fatalf("after two 429s: %+v", third.Analysis)
			}

			f.fake.Fail(1, http.StatusBadRequest)
			refused := f.waitAnalysis(t, f.widgetConversation(t, a, "Third")).Analysis
			if refused.Status != agentline.AnalysisFailed || refused.Attempts != 1 || !strings.Contains(refused.Error, "400") {
				t.Fatalf("refused: %+v", refused)
			}
			// An answer that does not match the schema is retried too.
			f.fake.Answer(func(map[string]any, string) any { return map[string]any{"summary": 7} })
			invalid := f.waitAnalysis(t, f.widgetConversation(t, a, "Fourth")).Analysis
			if invalid.Status != agentline.AnalysisFailed || invalid.Attempts != 3 || !strings.Contains(invalid.Error, "schema") {
				t.Fatalf("invalid answers: %+v", invalid)
			}
			for range 100 {
				if _, bodies := f.hooks.all(); len(bodies) >= 1 {
					break
				}
				waitABit()
			}
			if _, bodies := f.hooks.all(); len(bodies) != 1 {
				t.Fatalf("%d conversation.analyzed deliveries, want 1 (the done one)", len(bodies))
			}
		})
	}
}

// With the sandbox on and no provider key, the sandbox answers: the whole
// path works with no key, for OpenAI- and Gemini-kind agents alike.
func TestSandboxAnalyses(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			f := newFixture(t, d, map[string]string{"AGENTLINE_SANDBOX": "true", "OPENAI_API_KEY": "", "GEMINI_API_KEY": ""})
			g := f.agent(t, "gemini-2.5-flash-native-audio-preview-09-2025")
			a := f.agent(t, "gpt-realtime")
			c := f.waitAnalysis(t, f.widgetConversation(t, a, "I want a refund", "For order 9"))
			p := f.waitAnalysis(t, f.phoneConversation(t, g, "CA2", "Hi there"))
			for _, x := range []agentline.Conversation{c, p} {
				an := x.Analysis
				if an.Status != agentline.AnalysisDone || an.Model != "sandbox" || an.Success == nil || !*an.Success ||
					string(an.Data) != `{"callback_wanted":false,"order_id":""}` {
					t.Fatalf("sandbox analysis of %s: %+v", x.ID, an)
				}
			}
			if c.Analysis.Summary != "The user said: I want a refund / For order 9" || p.Analysis.Summary != "The user said: Hi there" {
				t.Fatalf("summaries %q %q", c.Analysis.Summary, p.Analysis.Summary)
			}
			if n := len(f.fake.Requests()); n != 0 {
				t.Fatalf("the sandbox sent %d provider requests", n)
			}
		})
	}
}
