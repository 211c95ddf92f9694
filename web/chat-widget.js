// agentline website voice widget. Plain JavaScript, no framework, no build
// step: agentline minifies it at start and serves it at /chat-widget.js.
//
//   <script async src="https://agentline.example.com/chat-widget.js" data-public-key="svc_pk_..."></script>
//   window.addEventListener("load", () => SvcChat.mount({projectId, agentId, channelId, publicKey}));
//
// The widget renders in a Shadow DOM, talks to the public widget API
// (/widget/v1) of the server it was loaded from, and opens its own session
// with the agent's provider: WebRTC with an "oai-events" data channel for
// OpenAI-compatible agents, a WebSocket with 16 kHz PCM up and 24 kHz PCM
// down for Gemini-compatible ones.
(function () {
  'use strict';
  if (window.SvcChat && window.SvcChat.version) return;

  const script = document.currentScript;
  const base = script && script.src ? new URL(script.src).origin : location.origin;
  const defaultKey = (script && script.getAttribute('data-public-key')) || '';
  const listeners = {};
  let current = null;

  // Sentences a visitor understands, by error code.
  const messages = {
    mic_denied: 'We can\u2019t hear you: microphone access is blocked. Allow the microphone for this site and try again.',
    no_mic: 'No microphone was found. Connect one and try again.',
    origin_not_allowed: 'This assistant isn\u2019t available on this website.',
    invalid_key: 'This assistant isn\u2019t set up correctly. Please let the site owner know.',
    rate_limited: 'Lots of people are talking to us right now. Please try again in a minute.',
    provider_error: 'The assistant is unavailable right now. Please try again later.',
    not_configured: 'The assistant is unavailable right now. Please try again later.',
    unavailable: 'The assistant is unavailable right now. Please try again later.',
    network: 'We couldn\u2019t connect. Check your internet connection and try again.',
    unsupported: 'This browser can\u2019t make voice calls. Please try a current browser.',
    failed: 'Something went wrong. Please try again.',
  };
  const stateLabels = {
    idle: 'Press \u201cStart talking\u201d to speak with us.',
    connecting: 'Connecting\u2026',
    listening: 'Listening\u2026',
    speaking: 'Agent speaking\u2026',
    ended: 'Conversation ended.',
    error: '',
  };

  function emit(event, data) {
    for (const fn of (listeners[event] || []).slice()) {
      try { fn(data); } catch (e) { console.error('SvcChat listener', e); }
    }
  }

  function widgetError(code, status) {
    const e = new Error(messages[code] || messages.failed);
    e.code = messages[code] ? code : 'failed';
    e.status = status || 0;
    return e;
  }

  // api calls the public widget API. A refused key or origin answers without
  // CORS headers, so the browser shows it as a network error; when the
  // server itself is reachable that is what it most likely was.
  async function api(key, path, body, keepalive) {
    const headers = { 'X-API-Key': key };
    if (body) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(base + '/widget/v1/' + path, {
        method: body ? 'POST' : 'GET', headers, body: body ? JSON.stringify(body) : undefined, keepalive: !!keepalive,
      });
    } catch (e) {
      let reachable = false;
      try { await fetch(base + '/healthz', { mode: 'no-cors' }); reachable = true; } catch (_) { /* offline */ }
      throw widgetError(reachable ? 'origin_not_allowed' : 'network');
    }
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON */ }
    if (!res.ok) {
      const code = data && data.error && data.error.code;
      throw widgetError(code || (res.status === 429 ? 'rate_limited' : res.status >= 500 ? 'provider_error' : 'failed'), res.status);
    }
    return data;
  }

  const css = `
:host{all:initial;position:fixed;bottom:20px;z-index:2147483000;font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2937}
:host([data-position=bottom-right]){right:20px}
:host([data-position=bottom-left]){left:20px}
:host([data-frame]){position:static;display:block;height:100%}
*{box-sizing:border-box;font:inherit}
button{cursor:pointer;border:0;border-radius:8px;padding:10px 14px;font-weight:600;color:#fff;background:var(--c,#2563eb)}
button:focus-visible,input:focus-visible{outline:3px solid #111827;outline-offset:2px}
button:disabled{opacity:.5;cursor:default}
.launcher{width:60px;height:60px;border-radius:50%;padding:0;display:grid;place-items:center;box-shadow:0 4px 14px rgba(0,0,0,.25)}
.launcher svg{width:28px;height:28px;fill:#fff}
.panel{position:absolute;bottom:72px;width:360px;max-width:calc(100vw - 40px);max-height:min(560px,calc(100vh - 110px));display:flex;flex-direction:column;gap:10px;padding:14px;border-radius:14px;background:#fff;color:#1f2937;box-shadow:0 10px 30px rgba(0,0,0,.25)}
:host([data-position=bottom-right]) .panel{right:0}
:host([data-position=bottom-left]) .panel{left:0}
:host([data-frame]) .panel{position:static;width:100%;max-width:none;height:100%;max-height:none;border-radius:0;box-shadow:none}
.panel[hidden],[hidden]{display:none}
header{display:flex;align-items:center;justify-content:space-between;gap:8px;color:#111827}
h2{margin:0;font-size:16px;font-weight:700;color:#111827}
.close{background:transparent;color:#374151;padding:4px 10px;font-size:20px;line-height:1}
.status{margin:0;color:#374151}
.error{margin:0;padding:10px;border-radius:8px;background:#fef2f2;color:#991b1b}
ol{list-style:none;margin:0;padding:0;overflow-y:auto;flex:1;min-height:60px;display:flex;flex-direction:column;gap:6px}
li{padding:7px 10px;border-radius:10px;max-width:85%;color:#111827;background:#f3f4f6;white-space:pre-wrap;overflow-wrap:anywhere}
li.user{align-self:flex-end;background:#e0e7ff}
form{display:flex;gap:6px}
input{flex:1;min-width:0;padding:9px 10px;border:1px solid #d1d5db;border-radius:8px;color:#111827;background:#fff}
.controls{display:flex;gap:8px}
.controls[hidden]{display:none}
.gate{flex-direction:column;gap:4px;overflow-y:auto}
.gate label{font-weight:600;margin-top:6px}
.gate .check{display:flex;gap:8px;align-items:center;font-weight:400}
.gate input,.gate select,.gate textarea{flex:none;width:100%;padding:9px 10px;border:1px solid #6b7280;border-radius:8px;color:#111827;background:#fff}
.gate .check input{width:auto}
.gate [aria-invalid=true]{border:2px solid #b91c1c}
.gate p{margin:0;color:#991b1b;font-weight:600}
.gate p:empty{display:none}
.gate button{margin-top:8px}
.talk{flex:1}
.mute{background:#4b5563}
.mute[aria-pressed=true]{background:#b91c1c}
`;
  const micIcon = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.9V21h2v-3.1A7 7 0 0 0 19 11z"/></svg>';

  // Widget is one mounted widget: its element, its config, and at most one
  // live conversation.
  class Widget {
    constructor(opts) {
      this.opts = opts;
      this.key = opts.publicKey || defaultKey;
      this.events = [];
      this.conv = null;
      this.host = document.createElement('svc-chat');
      this.host.setAttribute('data-position', 'bottom-right');
      if (opts.frame) this.host.setAttribute('data-frame', '');
      const root = this.root = this.host.attachShadow({ mode: 'open' });
      root.innerHTML = '<style>' + css + '</style>' +
        '<button class="launcher" type="button" aria-label="Open voice assistant" aria-expanded="false" aria-controls="panel">' + micIcon + '</button>' +
        '<section class="panel" id="panel" role="dialog" aria-label="Voice assistant" hidden>' +
        '<header><h2>Voice assistant</h2><button class="close" type="button" aria-label="Close voice assistant">\u00d7</button></header>' +
        '<p class="status" role="status" aria-live="polite"></p>' +
        '<p class="error" role="alert" hidden></p>' +
        '<ol class="transcript" aria-label="Conversation transcript" aria-live="polite" hidden></ol>' +
        '<form class="text" hidden><input type="text" aria-label="Type a message" placeholder="Type a message" autocomplete="off" maxlength="2000"><button type="submit">Send</button></form>' +
        '<div class="controls"><button class="talk" type="button">Start talking</button>' +
        '<button class="mute" type="button" aria-pressed="false" disabled>Mute</button></div>' +
        '</section>';
      const $ = (s) => root.querySelector(s);
      this.el = {
        launcher: $('.launcher'), panel: $('.panel'), title: $('h2'), close: $('.close'), status: $('.status'),
        error: $('.error'), transcript: $('.transcript'), form: $('form'), input: $('input'), talk: $('.talk'), mute: $('.mute'),
        controls: $('.controls'),
      };
      this.el.launcher.onclick = () => this.toggle();
      this.el.close.onclick = () => this.toggle(false);
      this.el.talk.onclick = () => (this.conv ? this.end() : this.start());
      this.el.mute.onclick = () => this.setMuted(this.el.mute.getAttribute('aria-pressed') !== 'true');
      this.el.form.onsubmit = (e) => { e.preventDefault(); this.sendText(); };
      root.addEventListener('keydown', (e) => { if (e.key === 'Escape' && !opts.frame) { this.toggle(false); this.el.launcher.focus(); } });
      if (opts.frame) { this.el.launcher.hidden = true; this.el.close.hidden = true; this.el.panel.hidden = false; }
      this.onPageHide = () => this.flush(true);
      window.addEventListener('pagehide', this.onPageHide);
      this.setState('idle');
      (opts.container || document.body).appendChild(this.host);
      this.load();
    }

    async load() {
      try {
        const cfg = this.config = await api(this.key, 'config');
        const s = (cfg.channel && cfg.channel.settings) || {};
        if (/^#[0-9a-fA-F]{6}$/.test(s.color || '')) this.host.style.setProperty('--c', s.color);
        this.host.setAttribute('data-position', s.position === 'bottom-left' ? 'bottom-left' : 'bottom-right');
        this.el.transcript.hidden = !s.show_transcript;
        this.el.form.hidden = !s.show_text_chat;
        const b = cfg.project && cfg.project.branding;
        const name = (b && b.display_name) || (cfg.project && cfg.project.name);
        if (name) this.el.title.textContent = name;
        if (cfg.channel.form_gate) this.gate(s.form);
        emit('ready', { config: cfg });
      } catch (e) {
        this.fail(e);
      }
    }

    // gate shows a live chat form channel's form first; its submission
    // answers the agent and the session the conversation continues.
    gate(form) {
      const el = this.el, f = document.createElement('form'), inputs = {};
      const hidden = [el.controls, el.transcript, el.form].filter((x) => !x.hidden);
      for (const x of hidden) x.hidden = true;
      el.status.textContent = 'Please tell us a little about you first.';
      f.className = 'gate';
      f.noValidate = true;
      for (const fd of form.fields) {
        const id = 'g-' + fd.name, label = document.createElement('label'), err = document.createElement('p');
        const input = document.createElement(fd.type === 'textarea' || fd.type === 'select' ? fd.type : 'input');
        if (input.tagName === 'INPUT') input.type = fd.type;
        if (fd.type === 'select') for (const o of [''].concat(fd.options)) input.add(new Option(o || 'Choose\u2026', o));
        input.id = id;
        input.name = fd.name;
        input.required = fd.required;
        err.id = id + '-e';
        input.setAttribute('aria-describedby', err.id);
        label.htmlFor = id;
        label.textContent = fd.label + (fd.required ? ' *' : '');
        if (fd.type === 'checkbox') { label.className = 'check'; label.prepend(input); f.append(label); } else f.append(label, input);
        f.append(err);
        inputs[fd.name] = [input, err];
      }
      const send = document.createElement('button');
      send.textContent = form.submit_label;
      f.append(send);
      el.controls.before(f);
      f.onsubmit = async (e) => {
        e.preventDefault();
        const body = {};
        for (const n in inputs) body[n] = inputs[n][0].type === 'checkbox' ? inputs[n][0].checked : inputs[n][0].value;
        send.disabled = true;
        el.error.hidden = true;
        try {
          const res = await fetch(base + '/api/channels/form/submit/' + (this.opts.channelId || this.config.channel.id), {
            method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
          });
          const data = await res.json().catch(() => ({}));
          if (!res.ok) {
            const fe = (data.error && data.error.fields) || {};
            let first = null;
            for (const n in inputs) {
              const [input, err] = inputs[n];
              err.textContent = fe[n] ? input.labels[0].textContent.replace(/ \*$/, '') + ' ' + fe[n] + '.' : '';
              input.setAttribute('aria-invalid', String(!!fe[n]));
              if (fe[n] && !first) first = input;
            }
            if (first) first.focus();
            else throw widgetError(data.error && data.error.code, res.status);
            return;
          }
          this.lead = data;
          f.remove();
          for (const x of hidden) x.hidden = false;
          this.setState('idle');
          emit('lead', { lead_id: data.lead_id, session_id: data.session_id });
          el.talk.focus();
        } catch (err) {
          this.fail(err && err.code ? err : widgetError('network'));
        } finally {
          send.disabled = false;
        }
      };
    }

    toggle(open) {
      const show = open === undefined ? this.el.panel.hidden : open;
      this.el.panel.hidden = !show;
      this.el.launcher.setAttribute('aria-expanded', String(show));
      this.el.launcher.setAttribute('aria-label', show ? 'Close voice assistant' : 'Open voice assistant');
      if (show) this.el.talk.focus();
    }

    setState(state) {
      this.state = state;
      this.el.status.textContent = stateLabels[state];
      this.el.status.hidden = !stateLabels[state];
      this.host.setAttribute('data-state', state);
      const live = state === 'connecting' || state === 'listening' || state === 'speaking';
      this.el.talk.textContent = live ? 'End conversation' : 'Start talking';
      this.el.talk.setAttribute('aria-label', live ? 'End conversation' : 'Start talking');
      this.el.mute.disabled = !(state === 'listening' || state === 'speaking');
    }

    fail(e) {
      const code = (e && e.code) || 'failed';
      this.el.error.textContent = messages[code] || messages.failed;
      this.el.error.hidden = false;
      this.host.setAttribute('data-error', code);
      this.setState('error');
      this.track('error', { code, message: String((e && e.message) || e) });
      emit('error', { code, message: messages[code] || messages.failed, status: (e && e.status) || 0 });
    }

    async start() {
      if (this.conv) return;
      this.el.error.hidden = true;
      this.host.removeAttribute('data-error');
      this.setState('connecting');
      // Audio must be unlocked inside the click that starts the call (iOS).
      const audio = document.createElement('audio');
      audio.autoplay = true;
      this.root.appendChild(audio);
      const conv = this.conv = { audio, lines: {}, ended: false };
      try {
        if (!navigator.mediaDevices || !window.RTCPeerConnection) throw widgetError('unsupported');
        try {
          conv.stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
        } catch (e) {
          throw widgetError(e && e.name === 'NotFoundError' ? 'no_mic' : 'mic_denied');
        }
        const lead = this.lead || {};
        const agentId = lead.agent_id || Number(this.opts.agentId) || (this.config && this.config.agents && this.config.agents[0] && this.config.agents[0].id);
        const sess = conv.session = await api(this.key, 'session', { agent_id: agentId, session_id: lead.session_id });
        this.sessionId = sess.session_id;
        if (conv.ended) return;
        if (sess.provider === 'gemini') await this.startGemini(conv, sess);
        else await this.startOpenAI(conv, sess);
        if (conv.ended) return;
        this.setState('listening');
        this.track('session_started', { provider: sess.provider, model: sess.model });
        emit('session_started', { session_id: sess.session_id });
      } catch (e) {
        this.teardown(conv);
        this.fail(e && e.code ? e : widgetError('provider_error'));
      }
    }

    async startOpenAI(conv, sess) {
      const pc = conv.pc = new RTCPeerConnection();
      pc.ontrack = (e) => { conv.audio.srcObject = e.streams[0]; conv.audio.play().catch(() => {}); };
      for (const t of conv.stream.getTracks()) pc.addTrack(t, conv.stream);
      const dc = conv.dc = pc.createDataChannel('oai-events');
      dc.onmessage = (e) => { let ev; try { ev = JSON.parse(e.data); } catch (_) { return; } this.onOpenAI(conv, ev); };
      conv.send = (obj) => { if (dc.readyState === 'open') dc.send(JSON.stringify(obj)); };
      pc.onconnectionstatechange = () => {
        if (conv.ended) return;
        if (pc.connectionState === 'failed') { this.teardown(conv); this.fail(widgetError('provider_error')); }
        if (pc.connectionState === 'closed') this.end();
      };
      await pc.setLocalDescription(await pc.createOffer());
      let res;
      try {
        res = await fetch(sess.connect.url, {
          method: 'POST', body: pc.localDescription.sdp,
          headers: { Authorization: 'Bearer ' + sess.client_secret, 'Content-Type': 'application/sdp' },
        });
      } catch (_) { throw widgetError('provider_error'); }
      if (!res.ok) throw widgetError(res.status === 429 ? 'rate_limited' : 'provider_error', res.status);
      const sdp = await res.text();
      if (conv.ended) return;
      await pc.setRemoteDescription({ type: 'answer', sdp });
      conv.mute = (m) => { for (const t of conv.stream.getAudioTracks()) t.enabled = !m; };
      conv.text = (text) => {
        conv.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
        conv.send({ type: 'response.create' });
      };
    }

    onOpenAI(conv, ev) {
      switch (ev.type) {
        case 'response.output_audio_transcript.delta':
        case 'response.audio_transcript.delta':
          this.line(conv, ev.item_id || 'a', 'assistant', ev.delta || '', false);
          break;
        case 'response.output_audio_transcript.done':
        case 'response.audio_transcript.done':
          this.line(conv, ev.item_id || 'a', 'assistant', ev.transcript || '', true);
          break;
        case 'conversation.item.input_audio_transcription.completed':
          this.line(conv, ev.item_id || 'u', 'user', ev.transcript || '', true);
          break;
        case 'output_audio_buffer.started':
        case 'response.created':
          this.setState('speaking');
          break;
        case 'output_audio_buffer.stopped':
        case 'response.done':
        case 'input_audio_buffer.speech_started':
          if (this.state === 'speaking') this.setState('listening');
          break;
        case 'response.function_call_arguments.done':
          this.runTool(conv, ev.call_id, ev.name, ev.arguments, (output) => {
            conv.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: ev.call_id, output } });
            conv.send({ type: 'response.create' });
          });
          break;
        case 'error':
          this.track('error', { provider: ev.error || ev });
          break;
      }
    }

    async startGemini(conv, sess) {
      const AC = window.AudioContext || window.webkitAudioContext;
      if (!AC || !window.AudioWorkletNode) throw widgetError('unsupported');
      const mic = conv.micCtx = new AC();
      const out = conv.outCtx = new AC({ sampleRate: 24000 });
      conv.playAt = 0;
      conv.sources = [];
      await mic.audioWorklet.addModule(base + '/chat-widget-audio.js');
      const url = sess.connect.url + (sess.connect.url.indexOf('?') < 0 ? '?' : '&') + 'access_token=' + encodeURIComponent(sess.ephemeral_token);
      const ws = conv.ws = new WebSocket(url);
      conv.send = (obj) => { if (ws.readyState === 1) ws.send(JSON.stringify(obj)); };
      await new Promise((resolve, reject) => {
        ws.onopen = () => conv.send({ setup: { model: sess.model.indexOf('models/') === 0 ? sess.model : 'models/' + sess.model } });
        ws.onerror = () => reject(widgetError('provider_error'));
        ws.onclose = () => reject(widgetError('provider_error'));
        ws.onmessage = async (e) => {
          let msg;
          try { msg = JSON.parse(typeof e.data === 'string' ? e.data : await e.data.text()); } catch (_) { return; }
          if (msg.setupComplete) resolve();
          this.onGemini(conv, msg);
        };
      });
      ws.onclose = () => { if (!conv.ended) { this.teardown(conv); this.fail(widgetError('provider_error')); } };
      const src = mic.createMediaStreamSource(conv.stream);
      const node = conv.node = new AudioWorkletNode(mic, 'pcm16-capture', { processorOptions: { rate: 16000 } });
      node.port.onmessage = (e) => {
        if (!conv.muted) conv.send({ realtimeInput: { audio: { data: toBase64(new Uint8Array(e.data)), mimeType: 'audio/pcm;rate=16000' } } });
      };
      src.connect(node);
      conv.mute = (m) => { conv.muted = m; };
      conv.text = (text) => conv.send({ clientContent: { turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true } });
    }

    onGemini(conv, msg) {
      const sc = msg.serverContent;
      if (sc) {
        if (sc.interrupted) { for (const s of conv.sources) { try { s.stop(); } catch (_) { /* done */ } } conv.sources = []; conv.playAt = 0; }
        const parts = (sc.modelTurn && sc.modelTurn.parts) || [];
        for (const p of parts) if (p.inlineData && p.inlineData.data) this.play(conv, p.inlineData.data);
        if (sc.inputTranscription && sc.inputTranscription.text) this.line(conv, 'u' + (conv.turn || 0), 'user', sc.inputTranscription.text, false);
        if (sc.outputTranscription && sc.outputTranscription.text) this.line(conv, 'a' + (conv.turn || 0), 'assistant', sc.outputTranscription.text, false);
        if (sc.turnComplete) {
          const t = conv.turn || 0;
          for (const id of ['u' + t, 'a' + t]) if (conv.lines[id]) this.line(conv, id, conv.lines[id].role, conv.lines[id].text, true);
          conv.turn = t + 1;
          if (this.state === 'speaking') this.setState('listening');
        }
      }
      if (msg.toolCall) {
        for (const call of msg.toolCall.functionCalls || []) {
          this.runTool(conv, call.id, call.name, call.args || {}, (output) => {
            conv.send({ toolResponse: { functionResponses: [{ id: call.id, name: call.name, response: { output } }] } });
          });
        }
      }
    }

    // play queues one chunk of 24 kHz 16-bit little-endian PCM.
    play(conv, b64) {
      const bytes = fromBase64(b64);
      const n = bytes.length >> 1;
      if (!n) return;
      const view = new DataView(bytes.buffer, bytes.byteOffset, n * 2);
      const buf = conv.outCtx.createBuffer(1, n, 24000);
      const ch = buf.getChannelData(0);
      for (let i = 0; i < n; i++) ch[i] = view.getInt16(i * 2, true) / 32768;
      const src = conv.outCtx.createBufferSource();
      src.buffer = buf;
      src.connect(conv.outCtx.destination);
      const at = Math.max(conv.outCtx.currentTime, conv.playAt);
      src.start(at);
      conv.playAt = at + buf.duration;
      conv.sources.push(src);
      src.onended = () => { conv.sources = conv.sources.filter((s) => s !== src); if (!conv.sources.length && this.state === 'speaking') this.setState('listening'); };
      this.setState('speaking');
    }

    // line shows a transcript line: deltas append, done replaces the text
    // and reports it.
    line(conv, id, role, text, done) {
      let l = conv.lines[id];
      if (!l) {
        const li = document.createElement('li');
        li.className = role;
        this.el.transcript.appendChild(li);
        l = conv.lines[id] = { li, role, text: '', done: false };
      }
      if (l.done) return;
      l.text = done ? text : l.text + text;
      l.li.textContent = l.text;
      this.el.transcript.scrollTop = this.el.transcript.scrollHeight;
      if (done && l.text) {
        l.done = true;
        this.track('transcript', { role, text: l.text });
        emit('transcript', { role, text: l.text });
      }
    }

    async runTool(conv, callId, name, args, reply) {
      let output;
      try {
        const r = await api(this.key, 'tools/execute', { session_id: this.sessionId, call_id: callId, name, arguments: args });
        output = r.output;
      } catch (e) {
        output = JSON.stringify({ error: 'the tool could not be run' });
      }
      if (!conv.ended) reply(output);
    }

    sendText() {
      const text = this.el.input.value.trim();
      if (!text || !this.conv || !this.conv.text) return;
      this.el.input.value = '';
      this.conv.text(text);
      this.line(this.conv, 't' + Date.now(), 'user', text, true);
    }

    setMuted(m) {
      if (!this.conv || !this.conv.mute) return;
      this.conv.mute(m);
      this.el.mute.setAttribute('aria-pressed', String(m));
      this.el.mute.textContent = m ? 'Unmute' : 'Mute';
    }

    teardown(conv) {
      conv.ended = true;
      if (conv.dc) try { conv.dc.close(); } catch (_) { /* closed */ }
      if (conv.pc) try { conv.pc.close(); } catch (_) { /* closed */ }
      if (conv.ws) try { conv.ws.close(1000); } catch (_) { /* closed */ }
      if (conv.stream) for (const t of conv.stream.getTracks()) t.stop();
      for (const c of [conv.micCtx, conv.outCtx]) if (c) c.close().catch(() => {});
      conv.audio.remove();
      if (this.conv === conv) this.conv = null;
      this.el.mute.setAttribute('aria-pressed', 'false');
      this.el.mute.textContent = 'Mute';
    }

    end() {
      const conv = this.conv;
      if (!conv) return;
      const started = !!conv.session;
      // Lines cut off by the end are reported as far as they got.
      for (const id of Object.keys(conv.lines)) {
        const l = conv.lines[id];
        if (!l.done && l.text) this.line(conv, id, l.role, l.text, true);
      }
      this.teardown(conv);
      this.setState('ended');
      if (started) {
        this.track('session_ended', {});
        emit('session_ended', { session_id: this.sessionId });
        this.flush();
      }
    }

    // track queues an analytics event of the current session; they are
    // sent in batches.
    track(type, data) {
      if (!this.sessionId) return;
      this.events.push({ type, at: new Date().toISOString(), data });
      if (this.events.length >= 20) this.flush();
      else if (!this.timer) this.timer = setTimeout(() => this.flush(), 5000);
    }

    flush(keepalive) {
      clearTimeout(this.timer);
      this.timer = null;
      if (!this.events.length || !this.sessionId) return;
      const events = this.events.splice(0, 100);
      api(this.key, 'analytics', { session_id: this.sessionId, events }, keepalive).catch(() => {});
    }

    destroy() {
      this.end();
      this.flush(true);
      window.removeEventListener('pagehide', this.onPageHide);
      this.host.remove();
    }
  }

  function toBase64(bytes) {
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
  }

  function fromBase64(b64) {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  window.SvcChat = {
    version: 1,
    // mount shows the widget; called after the window load event. Options:
    // projectId, agentId, channelId, publicKey (default: the script tag's
    // data-public-key).
    mount(opts) {
      opts = opts || {};
      const go = () => {
        if (current) current.destroy();
        current = new Widget(opts);
      };
      if (document.readyState === 'complete') go();
      else window.addEventListener('load', go, { once: true });
    },
    unmount() {
      if (current) current.destroy();
      current = null;
    },
    on(event, fn) {
      (listeners[event] = listeners[event] || []).push(fn);
    },
    off(event, fn) {
      listeners[event] = (listeners[event] || []).filter((f) => f !== fn);
    },
  };
})();
