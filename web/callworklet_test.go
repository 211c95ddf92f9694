package web

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"testing"

	"github.com/agentline/agentline/internal/g711"
)

// workletHarness runs console/call-worklet.js in Node with the
// AudioWorkletGlobalScope's few names stubbed and the context at 8 kHz (so
// capture and playback map sample to sample), and prints what it did:
//   - frames: the mu-law of every 16-bit value from -32767 to 32767 in steps
//     of 7 (padded to whole frames), fed as floats in blocks of 128;
//   - out: the playback of the mu-law bytes 0..255, with a mark after them;
//   - marks: the marks posted, in order, and whether a clear returned them;
//   - afterClear: the output after 1,000 queued samples, a mark and a clear.
const workletHarness = `
globalThis.sampleRate = 8000;
let posted = [];
globalThis.AudioWorkletProcessor = class { constructor() { this.port = { postMessage: (m) => posted.push(m) }; } };
let Processor;
globalThis.registerProcessor = (name, cls) => { Processor = cls; };
eval(require("fs").readFileSync(process.argv[1], "utf8"));

const cap = new Processor();
const values = [];
for (let v = -32767; v <= 32767; v += 7) values.push(v);
while (values.length % 160) values.push(0);
for (let i = 0; i < values.length; i += 128) {
  const block = new Float32Array(128);
  for (let j = 0; j < 128 && i + j < values.length; j++) block[j] = values[i + j] / 32767;
  cap.process([[block]], [[new Float32Array(128)]]);
}
const frames = [];
for (const m of posted) if (m.type === "frame") frames.push(...new Uint8Array(m.frame));

posted = [];
const play = new Processor();
play.port.onmessage({ data: { type: "play", mulaw: Uint8Array.from({ length: 256 }, (_, i) => i) } });
play.port.onmessage({ data: { type: "mark", name: "after-256" } });
const marksBefore = posted.length;
const out = [];
for (let i = 0; i < 3; i++) {
  const block = new Float32Array(128);
  play.process([[]], [[block]]);
  out.push(...block);
}
const marks = posted.filter((m) => m.type === "mark");

posted = [];
const clr = new Processor();
clr.port.onmessage({ data: { type: "play", mulaw: new Uint8Array(1000).fill(0x10) } });
clr.port.onmessage({ data: { type: "mark", name: "dropped" } });
clr.process([[]], [[new Float32Array(128)]]);
clr.port.onmessage({ data: { type: "clear" } });
const cleared = posted.filter((m) => m.type === "mark");
const afterClear = [];
for (let i = 0; i < 2; i++) {
  const block = new Float32Array(128);
  clr.process([[]], [[block]]);
  afterClear.push(...block);
}
console.log(JSON.stringify({ values, frames, out, marksBefore, marks, cleared, afterClear: afterClear.slice(2) }));
`

// The call's worklet encodes the microphone as G.711 mu-law exactly as
// internal/g711 does (the carrier's codec), decodes the agent's mu-law to
// the same samples, returns a mark only once the audio before it has
// played, and on clear drops its queue and returns pending marks at once.
// Node runs the worklet's own file; without node the test is skipped,
// unless AGENTLINE_REQUIRE_NODE=1.
func TestCallWorklet(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("AGENTLINE_REQUIRE_NODE") == "1" {
			t.Fatalf("AGENTLINE_REQUIRE_NODE=1 but no node: %v", err)
		}
		t.Skip("no node on PATH; AGENTLINE_REQUIRE_NODE=1 makes this a failure")
	}
	out, err := exec.Command(node, "-e", workletHarness, "console/call-worklet.js").CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got struct {
		Values      []int     `json:"values"`
		Frames      []byte    `json:"frames"`
		Out         []float64 `json:"out"`
		MarksBefore int       `json:"marksBefore"`
		Marks       []struct {
			Name    string `json:"name"`
			Cleared bool   `json:"cleared"`
		} `json:"marks"`
		Cleared []struct {
			Name    string `json:"name"`
			Cleared bool   `json:"cleared"`
		} `json:"cleared"`
		AfterClear []float64 `json:"afterClear"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	if len(got.Frames) != len(got.Values) || len(got.Frames)%160 != 0 {
		t.Fatalf("%d bytes of frames for %d samples", len(got.Frames), len(got.Values))
	}
	bad := 0
	for i, v := range got.Values {
		if want := g711.Encode(int16(v)); got.Frames[i] != want {
			if bad++; bad <= 5 {
				t.Errorf("sample %d: mu-law %#02x, internal/g711 %#02x", v, got.Frames[i], want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d samples encoded unlike internal/g711", bad, len(got.Values))
	}
	// At 8 kHz, output sample i+1 is input sample i (the interpolation
	// starts from silence).
	for u := range 256 {
		if want := float64(g711.Decode(byte(u))) / 32768; math.Abs(got.Out[u+1]-want) > 1e-6 {
			t.Errorf("mu-law %#02x played as %v, internal/g711 decodes %v", u, got.Out[u+1], want)
			break
		}
	}
	if got.MarksBefore != 0 {
		t.Error("a mark came back before its audio played")
	}
	if len(got.Marks) != 1 || got.Marks[0].Name != "after-256" || got.Marks[0].Cleared {
		t.Errorf("marks after playing: %+v", got.Marks)
	}
	if len(got.Cleared) != 1 || got.Cleared[0].Name != "dropped" || !got.Cleared[0].Cleared {
		t.Errorf("marks on clear: %+v", got.Cleared)
	}
	for i, v := range got.AfterClear {
		if v != 0 {
			t.Fatalf("sample %d after the clear is %v: the queue was not dropped", i, v)
		}
	}
}
