// agentline website voice widget: the view (launcher, panel, transcript,
// form gate) on top of @agentline/client, which runs the session. agentline
// bundles the two with esbuild at start and serves the result at
// /chat-widget.js; no npm step.
//
// One tag is enough: the key names the channel, its project and its agent.
//
//   <script async src="https://agentline.example.com/chat-widget.js" data-public-key="svc_pk_..."></script>
//
// Optional attributes: data-position (bottom-right | bottom-left),
// data-color (#rrggbb), data-open (the panel starts open). The spec's
// two-step form, SvcChat.mount({projectId, agentId, channelId, publicKey})
// after the load event, works too; explicit options win.
import { createClient } from '@agentline/client';

(function () {
  if (window.SvcChat && window.SvcChat.version) return;

  const script = document.currentScript;
  const base = script && script.src ? new URL(script.src).origin : location.origin;
  const attr = (n) => (script && script.getAttribute('data-' + n)) || '';
  const defaults = { publicKey: attr('public-key'), position: attr('position'), color: attr('color'), open: !!script && script.hasAttribute('data-open') };
  const listeners = {};
  let current = null;
  let explicit = false;

  // Sentences a visitor understands, by the SDK's error codes.
  const unavailable = 'The assistant is unavailable right now. Please try again later.';
  const messages = {
    microphone_denied: 'We can\u2019t hear you: microphone access is blocked. Allow the microphone for this site and try again.',
    no_microphone: 'No microphone was found. Connect one and try again.',
    origin_refused: 'This assistant isn\u2019t available on this website.',
    invalid_key: 'This assistant isn\u2019t set up correctly. Please let the site owner know.',
    rate_limited: 'Lots of people are talking to us right now. Please try again in a minute.',
    provider_unavailable: unavailable,
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
  // The labels that differ with the text chat shown (idle) or in a text
  // session (the others).
  const textLabels = {
    idle: 'Press \u201cStart talking\u201d to speak with us, or type a message.',
    listening: 'Chatting by text. Press \u201cStart talking\u201d to talk instead.',
    speaking: 'Agent writing\u2026',
  };

  function emit(event, data) {
    for (const fn of (listeners[event] || []).slice()) {
      try { fn(data); } catch (e) { console.error('SvcChat listener', e); }
    }
  }

  function widgetError(code, status) {
    const e = new Error(messages[code] || messages.failed);
    e.code = code;
    e.status = status || 0;
    return e;
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
      this.client = createClient({ baseUrl: base, publicKey: opts.publicKey || defaults.publicKey });
      this.session = null;
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
        '<button class="mute" type="button" aria-pressed="false" disabled>Mute</button>' +
        '<button class="end mute" type="button" hidden>End chat</button></div>' +
        '</section>';
      const $ = (s) => root.querySelector(s);
      this.el = {
        launcher: $('.launcher'), panel: $('.panel'), title: $('h2'), close: $('.close'), status: $('.status'),
        error: $('.error'), transcript: $('.transcript'), form: $('form'), input: $('input'), talk: $('.talk'), mute: $('.mute'),
        controls: $('.controls'), end: $('.end'),
      };
      this.el.launcher.onclick = () => this.toggle();
      this.el.close.onclick = () => this.toggle(false);
      // In a text chat, "Start talking" goes on by voice.
      this.el.talk.onclick = () => (this.session && !this.session.textOnly ? this.end() : this.start());
      this.el.end.onclick = () => this.end();
      this.el.mute.onclick = () => this.setMuted(this.el.mute.getAttribute('aria-pressed') !== 'true');
      this.el.form.onsubmit = (e) => { e.preventDefault(); this.sendText(); };
      root.addEventListener('keydown', (e) => { if (e.key === 'Escape' && !opts.frame) { this.toggle(false); this.el.launcher.focus(); } });
      if (opts.frame) { this.el.launcher.hidden = true; this.el.close.hidden = true; this.el.panel.hidden = false; }
      this.setState('idle');
      (opts.container || document.body).appendChild(this.host);
      this.load();
    }

    async load() {
      const o = this.opts;
      try {
        const cfg = this.config = await this.client.config();
        const s = (cfg.channel && cfg.channel.settings) || {};
        const color = o.color || defaults.color || s.color || '';
        if (/^#[0-9a-fA-F]{6}$/.test(color)) this.host.style.setProperty('--c', color);
        const pos = o.position || defaults.position || s.position;
        this.host.setAttribute('data-position', pos === 'bottom-left' ? 'bottom-left' : 'bottom-right');
        this.el.transcript.hidden = !s.show_transcript;
        this.el.form.hidden = !s.show_text_chat;
        if (this.state === 'idle') this.setState('idle');
        const b = cfg.project && cfg.project.branding;
        const name = (b && b.display_name) || (cfg.project && cfg.project.name);
        if (name) this.el.title.textContent = name;
        if (cfg.channel.form_gate) this.gate(s.form);
        if (o.open !== undefined ? o.open : defaults.open) this.toggle(true);
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
            else throw widgetError(res.status === 429 ? 'rate_limited' : 'failed');
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
      const el = this.el, live = state === 'connecting' || state === 'listening' || state === 'speaking';
      const text = live && !!this.session && this.session.textOnly;
      this.state = state;
      el.status.textContent = (text || (state === 'idle' && !el.form.hidden)) && textLabels[state] || stateLabels[state];
      el.status.hidden = !stateLabels[state];
      this.host.setAttribute('data-state', state);
      const label = live && !text ? 'End conversation' : 'Start talking';
      el.talk.textContent = label;
      el.talk.setAttribute('aria-label', label);
      // A live chat form's submission starts one session: its text chat
      // cannot go on by voice in another.
      el.talk.hidden = text && !!this.lead;
      el.mute.disabled = !(state === 'listening' || state === 'speaking');
      el.mute.hidden = text;
      el.end.hidden = !text;
    }

    fail(e) {
      const code = messages[e && e.code] ? e.code : 'failed';
      this.el.error.textContent = messages[code];
      this.el.error.hidden = false;
      this.host.setAttribute('data-error', code);
      this.setState('error');
      emit('error', { code, message: messages[code], status: (e && e.status) || 0 });
    }

    // start starts a conversation: spoken, or by text (textOnly: no
    // microphone, the agent writes). Started during a text chat, a spoken
    // one continues it: the text session ends, and a new voice session
    // gets the lines so far as its history.
    start(textOnly) {
      const prev = this.session;
      if (prev && (textOnly || !prev.textOnly)) return;
      this.el.error.hidden = true;
      this.host.removeAttribute('data-error');
      // The text chat ends first, so that its last line, even cut short, is
      // part of the history.
      if (prev) { this.session = null; prev.end(); } else this.said = [];
      // Audio must be unlocked inside the click that starts the call (iOS).
      const audio = document.createElement('audio');
      audio.autoplay = true;
      if (!textOnly) this.root.appendChild(audio);
      // A text chat's answers are only in the transcript.
      if (textOnly) this.el.transcript.hidden = false;
      const lead = this.lead || {};
      const cfg = this.config || {};
      const agentId = lead.agent_id || this.opts.agentId || (cfg.agents && cfg.agents[0] && cfg.agents[0].id);
      const s = this.session = this.client.startSession({ agentId, sessionId: prev ? undefined : lead.session_id, audioElement: audio, textOnly, history: this.said.slice() });
      const lines = {};
      s.on('state', (st) => { if (st !== 'ended' && this.session === s) this.setState(st); });
      s.on('transcript', (t) => {
        let li = lines[t.id];
        if (!li) {
          li = lines[t.id] = document.createElement('li');
          li.className = t.role;
          this.el.transcript.appendChild(li);
        }
        li.textContent = t.text;
        this.el.transcript.scrollTop = this.el.transcript.scrollHeight;
        if (t.final) {
          this.said.push({ role: t.role, text: t.text });
          emit('transcript', { role: t.role, text: t.text });
        }
      });
      s.on('error', (e) => this.fail(e));
      s.on('end', (e) => {
        audio.remove();
        if (s.id) emit('session_ended', { session_id: s.id });
        if (this.session !== s) return; // a text chat going on by voice
        this.session = null;
        this.setMuted(false);
        if (e.reason !== 'error') this.setState('ended');
      });
      s.ready.then(() => emit('session_started', { session_id: s.id }), () => {});
    }

    // sendText sends the typed message; before any conversation, it
    // starts a text chat with it.
    sendText() {
      const text = this.el.input.value.trim();
      if (!text || this.lead === undefined && this.config && this.config.channel.form_gate) return;
      if (!this.session) this.start(true);
      if (this.session && this.session.sendText(text)) this.el.input.value = '';
    }

    setMuted(m) {
      if (this.session) this.session.mute(m);
      this.el.mute.setAttribute('aria-pressed', String(m));
      this.el.mute.textContent = m ? 'Unmute' : 'Mute';
    }

    end() {
      if (this.session) this.session.end();
    }

    destroy() {
      this.end();
      this.host.remove();
    }
  }

  // same reports whether two mounts ask for the same widget.
  const same = (a, b) => JSON.stringify(a, (k, v) => (k === 'container' ? undefined : v)) === JSON.stringify(b, (k, v) => (k === 'container' ? undefined : v));

  function mount(opts, auto) {
    opts = opts || {};
    if (!auto) explicit = true;
    const go = () => {
      if (auto && (explicit || current)) return;
      if (current && same(current.opts, opts) && current.host.isConnected) return;
      if (current) current.destroy();
      current = new Widget(opts);
    };
    if (document.readyState === 'complete') go();
    else addEventListener('load', go, { once: true });
  }

  window.SvcChat = {
    version: 2,
    // mount shows the widget (one at most: a second mount replaces the
    // first, unless it asks for the same). Options: projectId, agentId,
    // channelId (strings or numbers), publicKey (default: the script tag's
    // data-public-key), position, color, open.
    mount: (opts) => mount(opts, false),
    unmount() {
      explicit = true;
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

  // The one-tag embed: with a key on the script tag and no mount call by
  // the end of the load event, the widget mounts itself.
  if (defaults.publicKey) {
    const auto = () => setTimeout(() => mount({}, true), 0);
    if (document.readyState === 'complete') auto();
    else addEventListener('load', auto, { once: true });
  }
})();
