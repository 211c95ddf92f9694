// The Gemini-compatible transport: the Live WebSocket with the session's
// ephemeral token, the microphone as 16 kHz PCM from agentline's
// AudioWorklet, the agent's voice as 24 kHz PCM played in an AudioContext.
// A text session needs neither: it shows the answer's text, which is the
// model turn's text parts when the token's setup asks for TEXT, or the
// outputTranscription of a native-audio model (asked for AUDIO, it
// refuses TEXT), whose audio is then not played. Typed messages go as
// realtimeInput text, as the server's Live sessions send text
// (geminilive.TextInput), whatever the model: native-audio and newer Live
// models refuse clientContent turns once the conversation runs, and every
// Live model takes realtime text. clientContent is kept for the history a
// new session is given before it goes live.
import { AgentlineError } from './errors.js';

export async function connectGemini(session, info) {
  const AC = window.AudioContext || window.webkitAudioContext;
  if (!session.textOnly && (!AC || !window.AudioWorkletNode)) throw new AgentlineError('unsupported', 'this browser has no AudioWorklet');
  const stream = session._stream;
  const out = session.textOnly ? null : new AC({ sampleRate: 24000 });
  const mic = stream ? new AC() : null;
  const c = { out, playAt: 0, sources: [], turn: 0, muted: false };
  const url = info.connect.url + (info.connect.url.indexOf('?') < 0 ? '?' : '&') + 'access_token=' + encodeURIComponent(info.ephemeral_token);
  let ws;
  const send = (obj) => { if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj)); };
  const t = {
    close() {
      if (ws) { ws.onclose = null; try { ws.close(1000); } catch (_) { /* closed */ } }
      for (const x of [mic, out]) if (x) x.close().catch(() => {});
    },
    mute(m) { c.muted = m; },
    text(text) { send({ realtimeInput: { text } }); },
    // history gives a new session the conversation so far, without an answer.
    history(lines) {
      send({ clientContent: { turns: lines.map((l) => ({ role: l.role === 'user' ? 'user' : 'model', parts: [{ text: l.text }] })), turnComplete: false } });
    },
  };
  try {
    if (mic) await mic.audioWorklet.addModule(session.client.baseUrl + '/chat-widget-audio.js');
    ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      const fail = () => reject(new AgentlineError('provider_unavailable', 'the Live socket closed'));
      ws.onopen = () => send({ setup: { model: info.model.indexOf('models/') === 0 ? info.model : 'models/' + info.model } });
      ws.onerror = fail;
      ws.onclose = fail;
      ws.onmessage = async (e) => {
        let msg;
        try { msg = JSON.parse(typeof e.data === 'string' ? e.data : await e.data.text()); } catch (_) { return; }
        if (msg.setupComplete) resolve();
        onMessage(session, c, msg, send);
      };
    });
  } catch (e) {
    t.close();
    throw e;
  }
  ws.onclose = () => session._fail(new AgentlineError('provider_unavailable', 'the Live socket closed'));
  if (mic) {
    const node = new AudioWorkletNode(mic, 'pcm16-capture', { processorOptions: { rate: 16000 } });
    node.port.onmessage = (e) => {
      if (!c.muted) send({ realtimeInput: { audio: { data: toBase64(new Uint8Array(e.data)), mimeType: 'audio/pcm;rate=16000' } } });
    };
    mic.createMediaStreamSource(stream).connect(node);
  }
  return t;
}

function onMessage(session, c, msg, send) {
  const sc = msg.serverContent;
  if (sc) {
    if (sc.interrupted) {
      for (const s of c.sources) { try { s.stop(); } catch (_) { /* done */ } }
      c.sources = [];
      c.playAt = 0;
      c.said = false;
    }
    const u = 'u' + c.turn, a = 'a' + c.turn;
    for (const p of (sc.modelTurn && sc.modelTurn.parts) || []) {
      if (p.inlineData && p.inlineData.data && c.out) { c.said = true; session._spoke(); play(session, c, p.inlineData.data); }
      // A text session's answer; a thought is not one.
      if (p.text && !p.thought && !c.out) { session._state('speaking'); session._line(a, 'assistant', p.text, false); }
    }
    if (sc.inputTranscription && sc.inputTranscription.text) { if (!c.said) session._heard(); session._line(u, 'user', sc.inputTranscription.text, false); }
    if (sc.outputTranscription && sc.outputTranscription.text) { if (!c.out) session._state('speaking'); session._line(a, 'assistant', sc.outputTranscription.text, false); }
    if (sc.turnComplete) {
      c.said = false; // a transcription piece after the answer's audio began is not the turn's end
      for (const id of [u, a]) { const l = session._lines[id]; if (l) session._line(id, l.role, l.text, true); }
      c.turn++;
      if (session.state === 'speaking' && !c.sources.length) session._state('listening');
    }
  }
  for (const call of (msg.toolCall && msg.toolCall.functionCalls) || []) {
    session._tool(call.id, call.name, call.args || {}).then((output) => {
      send({ toolResponse: { functionResponses: [{ id: call.id, name: call.name, response: { output } }] } });
    });
  }
}

// play queues one chunk of 24 kHz 16-bit little-endian PCM.
function play(session, c, b64) {
  const s = atob(b64), n = s.length >> 1;
  if (!n) return;
  const buf = c.out.createBuffer(1, n, 24000), ch = buf.getChannelData(0);
  for (let i = 0; i < n; i++) ch[i] = ((s.charCodeAt(2 * i) | (s.charCodeAt(2 * i + 1) << 8)) << 16 >> 16) / 32768;
  const src = c.out.createBufferSource();
  src.buffer = buf;
  src.connect(c.out.destination);
  const at = Math.max(c.out.currentTime, c.playAt);
  src.start(at);
  c.playAt = at + buf.duration;
  c.sources.push(src);
  src.onended = () => {
    c.sources = c.sources.filter((x) => x !== src);
    if (!c.sources.length && session.state === 'speaking') session._state('listening');
  };
  session._state('speaking');
}

function toBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
