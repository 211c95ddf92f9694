// The OpenAI-compatible transport: WebRTC with the session's client secret,
// the agent's voice on a remote audio track, events on the "oai-events"
// data channel. A text session has no microphone and plays nothing: its
// offer keeps one receive-only audio m-line, the shape of call the
// provider's WebRTC endpoint takes, on which a text session gets no audio.
import { AgentlineError } from './errors.js';

const unavailable = (status) => new AgentlineError(status === 429 ? 'rate_limited' : 'provider_unavailable', 'the provider refused the call', status || 0);

export async function connectOpenAI(session, info) {
  if (!window.RTCPeerConnection) throw new AgentlineError('unsupported', 'this browser has no WebRTC');
  const stream = session._stream;
  const audio = session.textOnly ? {} : session.opts.audioElement || new Audio();
  audio.autoplay = true;
  const pc = new RTCPeerConnection();
  if (!session.textOnly) pc.ontrack = (e) => { audio.srcObject = e.streams[0]; audio.play().catch(() => {}); };
  if (stream) for (const t of stream.getTracks()) pc.addTrack(t, stream);
  else pc.addTransceiver('audio', { direction: 'recvonly' });
  const dc = pc.createDataChannel('oai-events');
  // What is sent before the data channel opens (a message typed while
  // connecting, the history) waits for it.
  const early = [];
  const send = (obj) => { if (dc.readyState === 'open') dc.send(JSON.stringify(obj)); else if (dc.readyState === 'connecting') early.push(obj); };
  dc.onopen = () => { for (const obj of early.splice(0)) send(obj); };
  dc.onmessage = (e) => {
    let ev;
    try { ev = JSON.parse(e.data); } catch (_) { return; }
    onEvent(session, ev, send);
  };
  pc.onconnectionstatechange = () => {
    if (pc.connectionState === 'failed') session._fail(unavailable());
    if (pc.connectionState === 'closed') session.end('remote');
  };
  const t = {
    close() { try { dc.close(); pc.close(); } catch (_) { /* closed */ } audio.srcObject = null; },
    mute(m) { if (stream) for (const tr of stream.getAudioTracks()) tr.enabled = !m; },
    text(text) {
      item('user', text);
      send({ type: 'response.create' });
    },
    // history gives a new session the conversation so far, without an answer.
    history(lines) { for (const l of lines) item(l.role, l.text); },
  };
  const item = (role, text) => send({ type: 'conversation.item.create',
    item: { type: 'message', role, content: [{ type: role === 'user' ? 'input_text' : 'output_text', text }] } });
  try {
    await pc.setLocalDescription(await pc.createOffer());
    let res;
    try {
      res = await fetch(info.connect.url, {
        method: 'POST', body: pc.localDescription.sdp,
        headers: { Authorization: 'Bearer ' + info.client_secret, 'Content-Type': 'application/sdp' },
      });
    } catch (_) { throw unavailable(); }
    if (!res.ok) throw unavailable(res.status);
    await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
  } catch (e) {
    t.close();
    throw e;
  }
  return t;
}

function onEvent(session, ev, send) {
  const id = ev.item_id;
  switch (ev.type) {
    case 'response.output_audio_transcript.delta':
    case 'response.audio_transcript.delta':
      session._line(id || 'a', 'assistant', ev.delta || '', false);
      break;
    case 'response.output_audio_transcript.done':
    case 'response.audio_transcript.done':
      session._line(id || 'a', 'assistant', ev.transcript || '', true);
      break;
    case 'response.output_text.delta':
    case 'response.text.delta':
      session._line(id || 'a', 'assistant', ev.delta || '', false);
      break;
    case 'response.output_text.done':
    case 'response.text.done':
      session._line(id || 'a', 'assistant', ev.text || '', true);
      break;
    case 'conversation.item.input_audio_transcription.delta':
      session._line(id || 'u', 'user', ev.delta || '', false);
      break;
    case 'conversation.item.input_audio_transcription.completed':
      session._line(id || 'u', 'user', ev.transcript || '', true);
      break;
    case 'input_audio_buffer.speech_stopped':
      session._heard();
      break;
    case 'output_audio_buffer.started':
      session._spoke();
      session._state('speaking');
      break;
    case 'response.created':
      session._state('speaking');
      break;
    case 'output_audio_buffer.stopped':
    case 'response.done':
    case 'input_audio_buffer.speech_started':
      if (session.state === 'speaking') session._state('listening');
      break;
    case 'response.function_call_arguments.done':
      session._tool(ev.call_id, ev.name, ev.arguments).then((output) => {
        send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: ev.call_id, output } });
        send({ type: 'response.create' });
      });
      break;
    case 'error':
      session._track('error', { provider: ev.error || ev });
      break;
  }
}
