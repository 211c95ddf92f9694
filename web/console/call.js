// "Call this agent": the agent page's Phone tab calls the agent from the
// browser, over the phone path itself. The browser plays the carrier: it
// asks for a test call (POST /api/agents/{id}/test-calls: a one-minute,
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
// the call's conversation (GET /api/conversations/{id}) every second.
//
// The panel's data-* attributes count the frames (sent, received, played)
// and the clears, for people debugging audio and for the browser tests.

const FRAME = 160;
const POLL_MS = 1000;

function toBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

function fromBase64(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function randomSID(prefix) {
  const b = crypto.getRandomValues(new Uint8Array(16));
  return prefix + [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

// callPanel returns the card of the Phone tab that calls agent. The
// console passes its own api() and h() so that both share one sign-in and
// one way of building the page.
export function callPanel({ agent, api, h }) {
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

  if (agent.provider === "gemini") {
    // The relay passes mu-law through, which only the OpenAI-compatible
    // realtime kind speaks; the API would refuse the call.
    callBtn.disabled = true;
    status.textContent = `${agent.name} runs on a Gemini-compatible model, which cannot take phone calls: choose an OpenAI-compatible realtime model (gpt-realtime*) to call it.`;
  }

  let call = null;
  const show = () => {
    const c = call || { sent: 0, received: 0, played: 0, clears: 0 };
    for (const k of ["sent", "received", "played", "clears"]) card.dataset[k] = String(Math.floor(c[k]));
    counts.textContent = `Audio frames: ${c.sent} sent, ${Math.floor(c.received)} received, ${c.played} played; barge-ins: ${c.clears}.`;
  };
  const setState = (st, text) => {
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
    call = { sent: 0, received: 0, played: 0, clears: 0 };
    start(call).catch((e) => {
      err.textContent = e.message || String(e);
      hangUp(call, "failed");
    });
  });
  endBtn.addEventListener("click", () => call && hangUp(call, "ended"));
  addEventListener("hashchange", () => call && hangUp(call, "ended"), { once: true });

  async function start(c) {
    c.started = await api("POST", `/api/agents/${agent.id}/test-calls`);
    c.mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    c.ctx = new AudioContext();
    await c.ctx.audioWorklet.addModule("/console/call-worklet.js");
    c.node = new AudioWorkletNode(c.ctx, "mulaw-call", { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
    c.ctx.createMediaStreamSource(c.mic).connect(c.node);
    c.node.connect(c.ctx.destination);
    if (c.ctx.state === "suspended") await c.ctx.resume();
    if (c.hungUp) return;

    const url = new URL(c.started.stream_url, location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = c.ws = new WebSocket(url);
    c.streamSid = randomSID("MZ");
    c.seq = 0;
    const send = (msg) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ ...msg, sequenceNumber: String(++c.seq) }));
    };
    c.send = send;
    ws.onopen = () => {
      ws.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
      send({ event: "start", streamSid: c.streamSid, start: {
        streamSid: c.streamSid, callSid: c.started.call_sid, accountSid: "", tracks: ["inbound"],
        customParameters: { stream_token: c.started.token, direction: "test" },
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      } });
      setState("live", "Live: talk to the agent.");
      watch(c);
    };
    c.node.port.onmessage = (e) => {
      const m = e.data;
      if (m.type === "frame") {
        const n = c.sent++;
        send({ event: "media", streamSid: c.streamSid, media: { track: "inbound", chunk: String(n + 1), timestamp: String(n * 20), payload: toBase64(new Uint8Array(m.frame)) } });
      } else if (m.type === "mark") {
        send({ event: "mark", streamSid: c.streamSid, mark: { name: m.name } });
      } else if (m.type === "played") {
        c.played = Math.floor(m.samples / FRAME);
      }
      show();
    };
    ws.onmessage = (e) => {
      let m;
      try {
        m = JSON.parse(e.data);
      } catch {
        return;
      }
      if (m.event === "media" && m.media && m.media.payload) {
        const mulaw = fromBase64(m.media.payload);
        c.received += mulaw.length / FRAME;
        c.node.port.postMessage({ type: "play", mulaw }, [mulaw.buffer]);
      } else if (m.event === "mark" && m.mark) {
        c.node.port.postMessage({ type: "mark", name: m.mark.name });
      } else if (m.event === "clear") {
        c.clears++;
        c.node.port.postMessage({ type: "clear" });
        lines.append(h("li", { class: "tool" }, h("span", { class: "who" }, "Barge-in"), "you spoke over the agent: its queued audio was dropped."));
      }
      show();
    };
    ws.onclose = (e) => {
      if (!c.hungUp && e.code !== 1000 && e.code !== 1005) err.textContent = `The call's stream closed (${e.code}${e.reason ? ": " + e.reason : ""}).`;
      hangUp(c, "ended");
    };
  }

  // hangUp ends the call from this side: stop (so the relay records the
  // caller's hang-up), then the microphone and audio go. The stream's
  // close comes back from the server.
  function hangUp(c, st) {
    if (c.hungUp) return;
    c.hungUp = true;
    if (c.send) c.send({ event: "stop", streamSid: c.streamSid, stop: { accountSid: "", callSid: c.started.call_sid } });
    if (c.ws && c.ws.readyState === WebSocket.CONNECTING) c.ws.close();
    if (c.mic) c.mic.getTracks().forEach((t) => t.stop());
    if (c.ctx) c.ctx.close().catch(() => {});
    // The server closes the stream on stop; should it not, close it here.
    if (c.ws) setTimeout(() => c.ws.close(), 3000);
    setState(st, st === "failed" ? "The call could not start." : "Call ended.");
    if (c.started) refresh(c, true);
  }

  // watch shows the call's stored transcript and tool calls every second
  // while it lasts.
  // A card the console has replaced (another page, or this tab drawn
  // again) hangs its call up.
  async function watch(c) {
    while (!c.hungUp) {
      if (!card.isConnected) return hangUp(c, "ended");
      await refresh(c, false);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  // refresh reads the conversation once; after the call it reads until the
  // record has ended (bounded), so the last lines show.
  async function refresh(c, final) {
    for (let i = 0; i < (final ? 10 : 1); i++) {
      let conv;
      try {
        conv = await api("GET", `/api/conversations/${c.started.conversation_id}`);
      } catch (e) {
        err.textContent = e.message;
        return;
      }
      render(c, conv);
      if (!final || conv.status !== "live") return;
      await new Promise((r) => setTimeout(r, POLL_MS / 2));
    }
  }

  // render adds the lines and tool calls not shown yet, in time order;
  // lines already shown stay, so that the live region announces each once.
  function render(c, conv) {
    if (c !== call) return;
    c.shown = c.shown || new Set();
    const items = [
      ...(conv.transcript || []).map((l) => ({ at: l.at, key: "l" + l.at + l.speaker + l.text,
        li: () => h("li", { class: l.speaker }, h("span", { class: "who" }, l.speaker === "user" ? "You:" : "Agent:"), l.text) })),
      ...(conv.tool_calls || []).map((t) => ({ at: t.at, key: "t" + t.call_id, li: () => h("li", { class: "tool" }, h("span", { class: "who" }, "Tool " + t.name),
        "arguments " + JSON.stringify(t.arguments) + " → " + (t.result || "") + (t.is_error ? " (error)" : "")) })),
    ].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    for (const x of items) {
      if (c.shown.has(x.key)) continue;
      c.shown.add(x.key);
      lines.append(x.li());
    }
    if (conv.status !== "live") {
      status.textContent = `Call ended (${conv.end_reason || conv.status}). It is kept with the calls as conversation ${conv.id}.`;
    }
  }

  return card;
}
