// The few names of the AudioWorkletGlobalScope that call-worklet.js uses
// (the Web Audio API spec). TypeScript's libraries do not declare this
// scope, and the DOM's names are not in it, so tsconfig.worklet.json
// checks the worklet with these instead of the DOM library.

interface WorkletPort {
  postMessage(message: unknown, transfer?: ArrayBuffer[]): void;
  /** The page's messages: whatever it posts (the worklet says what it takes). */
  onmessage: ((event: { data: any }) => void) | null;
}

declare class AudioWorkletProcessor {
  readonly port: WorkletPort;
  constructor();
}

declare function registerProcessor(name: string, processorCtor: new () => AudioWorkletProcessor): void;

/** The context's sample rate, in Hz. */
declare const sampleRate: number;
