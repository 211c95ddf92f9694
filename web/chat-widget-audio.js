// AudioWorklet of the agentline widget: turns microphone audio into 16-bit
// little-endian PCM at the rate the provider wants (16 kHz for Gemini Live),
// in chunks of about 100 ms. Served as a file of agentline's own origin so
// host pages need no blob: or data: in their script-src.
class PCM16Capture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.rate = (options.processorOptions && options.processorOptions.rate) || 16000;
    this.step = sampleRate / this.rate;
    this.pos = 0;
    this.chunk = new Int16Array(Math.round(this.rate / 10));
    this.n = 0;
  }

  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    // Linear interpolation from the context's rate down to this.rate.
    for (; this.pos < input.length - 1; this.pos += this.step) {
      const i = Math.floor(this.pos);
      const f = this.pos - i;
      const v = Math.max(-1, Math.min(1, input[i] * (1 - f) + input[i + 1] * f));
      this.chunk[this.n++] = v < 0 ? v * 0x8000 : v * 0x7fff;
      if (this.n === this.chunk.length) {
        this.port.postMessage(this.chunk.buffer.slice(0));
        this.n = 0;
      }
    }
    this.pos -= input.length;
    return true;
  }
}

registerProcessor('pcm16-capture', PCM16Capture);
