// @ts-check
// "Call this agent": the agent page's Phone tab calls the agent from the
// browser, over the phone path itself. The browser plays the carrier: it
// asks for a test call (startTestCall in api.js: a one-minute,
// one-use stream token for the signed-in user; no number, no carrier),
// opens the same media stream WebSocket a real call's carrier opens, and
// speaks the carrier's protocol (Twilio Media Streams): connected, start
// with the token, media frames of 20 ms 8 kHz mu-law from the microphone
// (encoded in call-worklet.js), mark echoes once the agent's audio before
// them has played, stop. The agent's mu-law comes back as media frames and
// plays through the worklet (which decodes it); clear (barge-in) drops what
// is queued.
//
// The carrier's protocol has no channel for the transcript or tool calls,
// so the panel shows what the relay stores while the call runs: it reads
// the call's conversation (getConversation) every second.
//
// The panel's data-* attributes count the frames (sent, received, played)
// and the clears, for people debugging audio and for the browser tests.
//
// The console loads this module when the Phone tab opens (it is served on
// its own, not bundled), so it imports nothing: the console hands it its
// API calls and its DOM builder.

/** @import {Agent, Conversation, TestCall} from "./types.js" */
/** @import {h as H} from "./dom.js" */

/**
 * @typedef {object} Call One call from this browser: its counts, and once
 * started its test call, microphone, audio graph and stream.
 * @property {number} sent
 * @property {number} received
 * @property {number} played
 * @property {number} clears
 * @property {boolean} [hungUp]
 * @property {TestCall} [started]
 * @property {MediaStream} [mic]
 * @property {AudioContext} [ctx]
 * @property {AudioWorkletNode} [node]
 * @property {WebSocket} [ws]
 * @property {string} [streamSid]
 * @property {(msg: Record<string, unknown>) => void} [send]
 * @property {Set<string>} [shown] the lines and tool calls on screen
 */

const FRAME = 160;
const POLL_MS = 1000;
const WORKLET = "/console/call-worklet.js";

/** @param {Uint8Array} bytes */
function toBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

/** @param {string} b64 */
function fromBase64(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** @param {string} prefix */
function randomSID(prefix) {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return prefix + [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/**
 * openAudio opens the microphone and the worklet that encodes it and plays
 * the agent (call-worklet.js), and returns the worklet's node.
 * @param {Call} c
 */
async function openAudio(c) {
  const mic = c.mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
  const ctx = c.ctx = new AudioContext();
  await ctx.audioWorklet.addModule(WORKLET);
  const node = c.node = new AudioWorkletNode(ctx, "mulaw-call", { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
  ctx.createMediaStreamSource(mic).connect(node);
  node.connect(ctx.destination);
  if (ctx.state === "suspended") await ctx.resume();
  return node;
}

/**
 * openStream opens the call's media stream as its carrier would, with a
 * send that numbers each message (sequenceNumber) and drops it unless the
 * stream is open.
 * @param {Call} c @param {TestCall} started
 */
function openStream(c, started) {
  const url = new URL(started.stream_url, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = c.ws = new WebSocket(url);
  const streamSid = c.streamSid = randomSID("MZ");
  let seq = 0;
  const send = c.send = (/** @type {Record<string, unknown>} */ msg) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ ...msg, sequenceNumber: String(++seq) }));
  };
  return { ws, send, streamSid };
}

/** startMessage is the carrier's start: the call, its stream token, the audio's format. @param {TestCall} started @param {string} streamSid */
function startMessage(started, streamSid) {
  return { event: "start", streamSid, start: {
    streamSid, callSid: started.call_sid, accountSid: "", tracks: ["inbound"],
    customParameters: { stream_token: started.token, direction: "test" },
    mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
  } };
}

/**
 * fromWorklet passes on what the worklet posts: a microphone frame as
 * media, a mark whose audio has played, the count of samples played.
 * @param {Call} c @param {{type: string, frame?: ArrayBuffer, name?: string, samples?: number}} m
 * @param {(msg: Record<string, unknown>) => void} send @param {string} streamSid
 */
function fromWorklet(c, m, send, streamSid) {
  if (m.type === "frame" && m.frame) {
    const n = c.sent++;
    send({ event: "media", streamSid, media: { track: "inbound", chunk: String(n + 1), timestamp: String(n * 20), payload: toBase64(new Uint8Array(m.frame)) } });
  } else if (m.type === "mark") {
    send({ event: "mark", streamSid, mark: { name: m.name } });
  } else if (m.type === "played") {
    c.played = Math.floor((m.samples || 0) / FRAME);
  }
}

/**
 * fromStream passes on what the stream sends: the agent's audio and marks
 * to the worklet, and a clear (barge-in) that drops what is queued. It
 * returns the message's event, or "" when it is not JSON.
 * @param {Call} c @param {string} data @param {AudioWorkletNode} node
 */
function fromStream(c, data, node) {
  let m;
  try {
    m = JSON.parse(data);
  } catch {
    return "";
  }
  if (m.event === "media" && m.media && m.media.payload) {
    const mulaw = fromBase64(m.media.payload);
    c.received += mulaw.length / FRAME;
    node.port.postMessage({ type: "play", mulaw }, [mulaw.buffer]);
  } else if (m.event === "mark" && m.mark) {
    node.port.postMessage({ type: "mark", name: m.mark.name });
  } else if (m.event === "clear") {
    c.clears++;
    node.port.postMessage({ type: "clear" });
  }
  return String(m.event);
}

/**
 * callPanel returns the card of the Phone tab that calls agent. The
 * console passes its own API calls and h() so that both share one sign-in
 * and one way of building the page.
 * @param {object} deps
 * @param {Agent} deps.agent
 * @param {(agentId: number) => Promise<TestCall>} deps.startTestCall records a test call of the agent
 * @param {(id: string) => Promise<Conversation>} deps.getConversation reads the call's conversation
 * @param {typeof H} deps.h
 */
export function callPanel({ agent, startTestCall, getConversation, h }) {
  const status = h("p", { class: "muted", role: "status", id: "browser-call-status" }, "Not connected.");
  const counts = h("p", { class: "muted", id: "browser-call-audio" });
  const err = h("p", { class: "form-error", role: "alert" });
  const lines = h("ol", { class: "transcript", id: "browser-call-transcript", "aria-label": "Call transcript", "aria-live": "polite" });
  const callBtn = h("button", { type: "button", class: "primary" }, "Call this agent");
  const endBtn = h("button", { type: "button", class: "danger", hidden: true }, "End call");
  const card = h("div", { class: "card test-panel", id: "browser-call", "data-state": "idle" },
    h("h2", {}, "Call from this browser"),
    h("p", { class: "muted" }, `Calls ${agent.name} over the phone path itself: this browser plays the carrier and sends your microphone as 8 kHz mu-law through the same media stream and relay a phone call uses. No number or carrier is needed; the call is kept with the calls, direction test.`),
    h("div", { class: "row" }, callBtn, endBtn), status, counts, err, lines);

  /** @type {Call | null} */
  let call = null;
  const show = () => {
    const c = call || { sent: 0, received: 0, played: 0, clears: 0 };
    for (const k of /** @type {const} */ (["sent", "received", "played", "clears"])) card.dataset[k] = String(Math.floor(c[k]));
    counts.textContent = `Audio frames: ${c.sent} sent, ${Math.floor(c.received)} received, ${c.played} played; barge-ins: ${c.clears}.`;
  };
  const setState = (/** @type {string} */ st, /** @type {string} */ text) => {
    card.dataset.state = st;
    status.textContent = text;
    callBtn.hidden = st === "live" || st === "connecting";
    endBtn.hidden = !callBtn.hidden;
  };
  show();

  callBtn.addEventListener("click", () => {
    err.textContent = "";
    lines.replaceChildren();
    setState("connecting", "Connecting…");
    const c = call = { sent: 0, received: 0, played: 0, clears: 0 };
    start(c).catch((e) => {
      err.textContent = e.message || String(e);
      hangUp(c, "failed");
    });
  });
  endBtn.addEventListener("click", () => call && hangUp(call, "ended"));
  addEventListener("hashchange", () => call && hangUp(call, "ended"), { once: true });

  /** start asks for the test call, opens the microphone and the stream, and wires them. @param {Call} c */
  async function start(c) {
    const started = c.started = await startTestCall(agent.id);
    const node = await openAudio(c);
    if (c.hungUp) return;
    const { ws, send, streamSid } = openStream(c, started);
    ws.onopen = () => {
      ws.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
      send(startMessage(started, streamSid));
      setState("live", "Live: talk to the agent.");
      watch(c);
    };
    node.port.onmessage = (e) => {
      fromWorklet(c, e.data, send, streamSid);
      show();
    };
    ws.onmessage = (e) => {
      if (fromStream(c, e.data, node) === "clear") {
        lines.append(h("li", { class: "tool" }, h("span", { class: "who" }, "Barge-in"), "you spoke over the agent: its queued audio was dropped."));
      }
      show();
    };
    ws.onclose = (e) => {
      if (!c.hungUp && e.code !== 1000 && e.code !== 1005) err.textContent = `The call's stream closed (${e.code}${e.reason ? ": " + e.reason : ""}).`;
      hangUp(c, "ended");
    };
  }

  /**
   * hangUp ends the call from this side: stop (so the relay records the
   * caller's hang-up), then the microphone and audio go. The stream's
   * close comes back from the server.
   * @param {Call} c @param {string} st
   */
  function hangUp(c, st) {
    if (c.hungUp) return;
    c.hungUp = true;
    if (c.send && c.started) c.send({ event: "stop", streamSid: c.streamSid, stop: { accountSid: "", callSid: c.started.call_sid } });
    const ws = c.ws;
    if (ws && ws.readyState === WebSocket.CONNECTING) ws.close();
    if (c.mic) c.mic.getTracks().forEach((t) => t.stop());
    if (c.ctx) c.ctx.close().catch(() => {});
    // The server closes the stream on stop; should it not, close it here.
    if (ws) setTimeout(() => ws.close(), 3000);
    setState(st, st === "failed" ? "The call could not start." : "Call ended.");
    if (c.started) refresh(c, true);
  }

  /**
   * watch shows the call's stored transcript and tool calls every second
   * while it lasts. A card the console has replaced (another page, or this
   * tab drawn again) hangs its call up.
   * @param {Call} c
   */
  async function watch(c) {
    while (!c.hungUp) {
      if (!card.isConnected) return hangUp(c, "ended");
      await refresh(c, false);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /**
   * refresh reads the conversation once; after the call it reads until the
   * record has ended (bounded), so the last lines show.
   * @param {Call} c @param {boolean} final
   */
  async function refresh(c, final) {
    if (!c.started) return;
    for (let i = 0; i < (final ? 10 : 1); i++) {
      let conv;
      try {
        conv = await getConversation(c.started.conversation_id);
      } catch (e) {
        err.textContent = e instanceof Error ? e.message : String(e);
        return;
      }
      render(c, conv);
      if (!final || conv.status !== "live") return;
      await new Promise((r) => setTimeout(r, POLL_MS / 2));
    }
  }

  /**
   * render adds the lines and tool calls not shown yet, in time order;
   * lines already shown stay, so that the live region announces each once.
   * @param {Call} c @param {Conversation} conv
   */
  function render(c, conv) {
    if (c !== call) return;
    const shown = c.shown = c.shown || new Set();
    const items = [
      ...(conv.transcript || []).map((l) => ({ at: l.at, key: "l" + l.at + l.speaker + l.text,
        li: () => h("li", { class: l.speaker }, h("span", { class: "who" }, l.speaker === "user" ? "You:" : "Agent:"), l.text) })),
      ...(conv.tool_calls || []).map((t) => ({ at: t.at, key: "t" + t.call_id, li: () => h("li", { class: "tool" }, h("span", { class: "who" }, "Tool " + t.name),
        "arguments " + JSON.stringify(t.arguments) + " → " + (t.result || "") + (t.is_error ? " (error)" : "")) })),
    ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    for (const x of items) {
      if (shown.has(x.key)) continue;
      shown.add(x.key);
      lines.append(x.li());
    }
    if (conv.status !== "live") {
      status.textContent = `Call ended (${conv.end_reason || conv.status}). It is kept with the calls as conversation ${conv.id}.`;
    }
  }

  return card;
}
