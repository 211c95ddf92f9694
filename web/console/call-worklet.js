// @ts-check
// AudioWorklet of the console's "Call this agent" (call.js): the browser's
// side of a phone line. Its input is the microphone, taken down from the
// context's rate to 8 kHz and encoded as G.711 mu-law in 20 ms frames of
// 160 bytes, posted to the page. Its output plays the agent's audio, which
// the page posts as the carrier would get it (8 kHz mu-law), decoded and
// brought up to the context's rate; marks
// posted between chunks come back once the audio before them has played,
// and "clear" drops what is queued and returns the pending marks at once,
// as the carrier does.
//
// It runs in an AudioWorkletGlobalScope, not a page: its globals
// (AudioWorkletProcessor, registerProcessor, sampleRate) are declared in
// worklet.d.ts, and tsconfig.worklet.json checks it without the DOM.

const RATE = 8000;
const FRAME = 160; // 20 ms at 8 kHz

/** mulaw encodes one 16-bit sample (G.711 mu-law, with its bias and clip). @param {number} s */
function mulaw(s) {
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  if (s > 32635) s = 32635;
  s += 0x84;
  let exp = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exp > 0; mask >>= 1) exp--;
  const mant = (s >> (exp + 3)) & 0x0f;
  return ~(sign | (exp << 4) | mant) & 0xff;
}

// ulaw is the G.711 mu-law decoding table, to floats in [-1, 1).
const ulaw = new Float32Array(256);
for (let i = 0; i < 256; i++) {
  const u = ~i & 0xff;
  const exp = (u >> 4) & 7;
  const s = ((((u & 0x0f) << 3) + 0x84) << exp) - 0x84;
  ulaw[i] = (u & 0x80 ? -s : s) / 32768;
}

/**
 * @typedef {{type: "play", mulaw: Uint8Array} | {type: "mark", name: string} | {type: "clear"}} Command
 * what the page posts: audio to play, a mark to return once it has played, or clear
 */

class MulawCall extends AudioWorkletProcessor {
  constructor() {
    super();
    // Capture: a box filter over each output sample's share of input
    // samples, which also keeps most aliasing out of the 4 kHz band.
    this.acc = 0;
    this.cnt = 0;
    this.phase = 0;
    this.frame = new Uint8Array(FRAME);
    this.n = 0;
    // Playback: chunks of 8 kHz samples, the position in the first one,
    // the two samples interpolated between, and the marks still to come
    // back, each at the count of samples queued before it.
    /** @type {Float32Array[]} */
    this.queue = [];
    this.at = 0;
    this.t = 0;
    this.prev = 0;
    this.cur = 0;
    this.queued = 0;
    this.played = 0;
    /** @type {{name: string, at: number}[]} */
    this.marks = [];
    this.port.onmessage = (/** @type {{data: Command}} */ e) => this.command(e.data);
  }

  /** @param {Command} m */
  command(m) {
    if (m.type === "play") {
      const samples = new Float32Array(m.mulaw.length);
      for (let i = 0; i < samples.length; i++) samples[i] = ulaw[m.mulaw[i]];
      this.queue.push(samples);
      this.queued += samples.length;
    } else if (m.type === "mark") {
      this.marks.push({ name: m.name, at: this.queued });
      this.settle();
    } else if (m.type === "clear") {
      this.queue = [];
      this.at = 0;
      this.queued = this.played;
      for (const k of this.marks) this.port.postMessage({ type: "mark", name: k.name, cleared: true });
      this.marks = [];
    }
  }

  // settle returns the marks whose audio has all played.
  settle() {
    while (this.marks.length && this.marks[0].at <= this.played) {
      this.port.postMessage({ type: "mark", name: this.marks[0].name });
      this.marks.shift();
    }
  }

  // next is the next 8 kHz sample to play, or silence when none is queued.
  next() {
    while (this.queue.length && this.at >= this.queue[0].length) {
      this.queue.shift();
      this.at = 0;
    }
    if (!this.queue.length) return 0;
    this.played++;
    if (this.played % FRAME === 0) this.port.postMessage({ type: "played", samples: this.played });
    return this.queue[0][this.at++];
  }

  /** @param {Float32Array[][]} inputs @param {Float32Array[][]} outputs */
  process(inputs, outputs) {
    const input = inputs[0] && inputs[0][0];
    if (input) {
      for (let i = 0; i < input.length; i++) {
        this.acc += input[i];
        this.cnt++;
        this.phase += RATE;
        if (this.phase < sampleRate) continue;
        this.phase -= sampleRate;
        const v = Math.max(-1, Math.min(1, this.acc / this.cnt));
        this.acc = this.cnt = 0;
        this.frame[this.n++] = mulaw(Math.round(v * 32767));
        if (this.n === FRAME) {
          this.port.postMessage({ type: "frame", frame: this.frame.buffer }, [this.frame.buffer]);
          this.frame = new Uint8Array(FRAME);
          this.n = 0;
        }
      }
    }
    const out = outputs[0] && outputs[0][0];
    if (out) {
      const step = RATE / sampleRate;
      for (let i = 0; i < out.length; i++) {
        this.t += step;
        while (this.t >= 1) {
          this.t -= 1;
          this.prev = this.cur;
          this.cur = this.next();
        }
        out[i] = this.prev + (this.cur - this.prev) * this.t;
      }
      this.settle();
    }
    return true;
  }
}

registerProcessor("mulaw-call", MulawCall);
