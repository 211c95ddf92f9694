// @agentline/client: the browser client of agentline's public widget API
// (/widget/v1). Plain ES modules, no dependencies. It reads a channel's
// config, starts sessions, opens the provider session by kind (WebRTC with
// the "oai-events" data channel for OpenAI-compatible agents, the Live
// WebSocket for Gemini-compatible ones), runs the agent's tool calls through
// /widget/v1/tools/execute, and reports analytics, heartbeats and the end.
// agentline's widget (/chat-widget.js) is built on it.
import { connectOpenAI } from './openai.js';
import { connectGemini } from './gemini.js';
import { AgentlineError } from './errors.js';

export { AgentlineError };

/** Heartbeat interval of a live session. */
export const HEARTBEAT_MS = 30000;

// The server's error codes, as the client's.
const codes = {
  origin_not_allowed: 'origin_refused', invalid_key: 'invalid_key', unauthorized: 'invalid_key',
  rate_limited: 'rate_limited', provider_error: 'provider_unavailable', not_configured: 'provider_unavailable',
  unavailable: 'provider_unavailable',
};

export function createClient(options) {
  const o = options || {};
  const key = o.publicKey || '';
  const base = String(o.baseUrl || location.origin).replace(/\/+$/, '');
  const warned = {};
  // warn tells the site owner, once per cause, what to fix.
  const warn = (code, text) => { if (!warned[code]) { warned[code] = 1; console.warn('agentline: ' + text); } };
  const short = key.slice(0, 11) + '\u2026';
  // A console test session (the agentline console's Test panel): the
  // signed-in user's token instead of a key, and the agent's test routes
  // (endpoint, e.g. /api/agents/3/test-session) instead of /widget/v1.
  const auth = o.token ? { Authorization: 'Bearer ' + o.token } : { 'X-API-Key': key };
  const url = (path) => base + (o.endpoint ? o.endpoint + (path === 'session' ? '' : '/' + path) : '/widget/v1/' + path);

  async function request(path, body, keepalive) {
    let res;
    try {
      res = await fetch(url(path), {
        method: body ? 'POST' : 'GET', keepalive: !!keepalive, body: body ? JSON.stringify(body) : undefined,
        headers: body ? { ...auth, 'Content-Type': 'application/json' } : auth,
      });
    } catch (e) {
      // A refused origin is answered without CORS headers, which the page
      // sees as a network error: when the server is reachable, that is it.
      let up = false;
      try { await fetch(base + '/healthz', { mode: 'no-cors' }); up = true; } catch (_) { /* offline */ }
      if (!up) throw new AgentlineError('network', 'agentline at ' + base + ' is unreachable');
      warn('origin', 'this page\u2019s origin ' + location.origin + ' is not in the allowed_origins of widget key ' + short +
        ': add "' + location.origin + '" to the key\u2019s allowed_origins in the agentline console (Channels \u2192 key), or use a key without allowed_origins');
      throw new AgentlineError('origin_refused', 'origin ' + location.origin + ' is not in this key\u2019s allowed_origins', 401, undefined, 'origin_not_allowed');
    }
    let data = null;
    try { data = await res.json(); } catch (_) { /* not JSON */ }
    if (res.ok) return data;
    const err = (data && data.error) || {};
    const code = codes[err.code] || (res.status === 429 ? 'rate_limited' : res.status >= 500 ? 'provider_unavailable' : err.code || 'failed');
    const retry = Number(res.headers.get('Retry-After')) || undefined;
    if (code === 'invalid_key') warn(code, 'widget key ' + short + ' was refused by ' + base + ': it is mistyped, revoked, or of another agentline server (' + (err.message || res.status) + ')');
    if (code === 'rate_limited') warn(code, 'widget key ' + short + ' is over its rate limit; retry after ' + (retry || '?') + ' s, or raise rate_limit_per_minute / rate_limit_per_day on the key');
    throw new AgentlineError(code, err.message || 'HTTP ' + res.status, res.status, code === 'rate_limited' ? retry : undefined, err.code);
  }

  let cfg = null;
  const client = {
    baseUrl: base,
    publicKey: key,
    request,
    config() {
      cfg = cfg || request('config');
      cfg.catch(() => { cfg = null; });
      return cfg;
    },
    startSession: (opts) => new Session(client, opts || {}),
  };
  return client;
}

const micError = (e) => e && e.name === 'NotFoundError'
  ? new AgentlineError('no_microphone', 'no microphone was found')
  : new AgentlineError('microphone_denied', 'microphone access was refused');

// Session is one conversation; it starts connecting at once.
class Session {
  constructor(client, opts) {
    this.client = client;
    this.opts = opts;
    this.state = 'idle';
    this.id = null;
    this.provider = null;
    this.muted = false;
    this.textOnly = !!opts.textOnly;
    this._q = [];
    this._l = {};
    this._lines = {};
    this._events = [];
    this.ready = Promise.resolve().then(() => this._start());
    this.ready.catch(() => {});
  }

  on(event, fn) { (this._l[event] = this._l[event] || []).push(fn); return this; }

  off(event, fn) { this._l[event] = (this._l[event] || []).filter((f) => f !== fn); return this; }

  _emit(event, data) {
    for (const fn of (this._l[event] || []).slice()) {
      try { fn(data); } catch (e) { console.error('agentline listener', e); }
    }
  }

  _state(s) {
    if (this.state === s || this.state === 'ended') return;
    this.state = s;
    this._emit('state', s);
  }

  async _start() {
    this._state('connecting');
    try {
      const o = this.opts;
      if (!o.textOnly) {
        if (!navigator.mediaDevices) throw new AgentlineError('unsupported', 'this browser has no microphone access');
        try {
          this._stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
        } catch (e) { throw micError(e); }
        if (this.state === 'ended') return this._stop(), this;
      }
      let agentId = Number(o.agentId);
      if (!agentId) {
        const c = await this.client.config();
        agentId = c.agents[0] && c.agents[0].id;
      }
      const s = this.info = await this.client.request('session', {
        agent_id: agentId, session_id: o.sessionId || undefined, modality: this.textOnly ? 'text' : undefined,
      });
      this.id = s.session_id;
      this.provider = s.provider;
      if (this.state === 'ended') return this;
      this._t = await (s.provider === 'gemini' ? connectGemini : connectOpenAI)(this, s);
      if (this.state === 'ended') return this._t.close(), this;
      // The conversation so far (a text chat going on by voice) first,
      // then what the visitor typed while it connected.
      if (o.history && o.history.length) this._t.history(o.history);
      this._state('listening');
      this._track('session_started', { provider: s.provider, model: s.model, modality: s.modality });
      for (const text of this._q.splice(0)) this._t.text(text);
      this._hb = setInterval(() => this._track('heartbeat', {}, true), HEARTBEAT_MS);
      // Leaving the page ends the session: its end is reported with
      // keepalive, which outlives the page. A hidden page is not an end (a
      // visitor may talk on from another tab), but a browser may discard a
      // hidden page without pagehide: what is queued goes now, with a
      // heartbeat, so the server's idle sweep ends it at the time it was
      // last seen if it never comes back.
      this._hide = () => this.end('pagehide');
      this._vis = () => { if (document.visibilityState === 'hidden') this._track('heartbeat', {}, 'keepalive'); };
      addEventListener('pagehide', this._hide);
      document.addEventListener('visibilitychange', this._vis);
      return this;
    } catch (e) {
      const err = e instanceof AgentlineError ? e : new AgentlineError('provider_unavailable', String((e && e.message) || e));
      this._fail(err);
      throw err;
    }
  }

  _fail(err) {
    if (this.state === 'ended') return;
    this._track('error', { code: err.code, message: err.message });
    this._emit('error', err);
    this.end('error');
  }

  // _line shows a transcript line: deltas append, final replaces the text.
  _line(id, role, text, final) {
    let l = this._lines[id];
    if (!l) l = this._lines[id] = { role, text: '' };
    if (l.final) return;
    const delta = final ? '' : text;
    l.text = final ? text || l.text : l.text + text;
    l.final = final;
    if (final && !l.text) return;
    this._emit('transcript', { id, role, text: l.text, delta, final });
    if (final) this._track('transcript', { role, text: l.text });
  }

  // _tool runs a tool call through agentline and answers its output.
  async _tool(callId, name, args) {
    let output, isError = false;
    try {
      const r = await this.client.request('tools/execute', { session_id: this.id, call_id: callId, name, arguments: args });
      output = r.output;
      isError = !!r.is_error;
    } catch (e) {
      output = JSON.stringify({ error: 'the tool could not be run' });
      isError = true;
    }
    this._emit('toolCall', { callId, name, arguments: args, output, isError });
    return output;
  }

  // sendText sends a typed message; while the session connects, it waits
  // and goes as soon as the session is live.
  sendText(text) {
    text = String(text || '').trim();
    if (!text || this.state === 'ended') return false;
    if (this._t) this._t.text(text);
    else this._q.push(text);
    this._line('t' + Object.keys(this._lines).length, 'user', text, true);
    return true;
  }

  mute(muted) {
    this.muted = muted !== false;
    if (this._t) this._t.mute(this.muted);
  }

  end(reason) {
    if (this.state === 'ended') return;
    reason = reason || 'client';
    for (const id in this._lines) if (!this._lines[id].final) this._line(id, this._lines[id].role, this._lines[id].text, true);
    if (this._t) this._t.close();
    this._stop();
    clearInterval(this._hb);
    removeEventListener('pagehide', this._hide);
    document.removeEventListener('visibilitychange', this._vis);
    this._track('session_ended', { reason });
    this._flush(true);
    this.state = 'ended';
    this._emit('state', 'ended');
    this._emit('end', { reason, sessionId: this.id });
  }

  _stop() {
    if (this._stream) for (const t of this._stream.getTracks()) t.stop();
  }

  // _heard marks the end of the visitor's speech (the provider's
  // speech_stopped, or Gemini's last input transcription piece); _spoke, the
  // answer's first audio: the wait between is reported as turn_latency,
  // at most 500 per session, each within the server's 0..60000 ms.
  _heard() { this._turnAt = performance.now(); }

  _spoke() {
    if (this._turnAt == null) return;
    const ms = Math.round(performance.now() - this._turnAt);
    this._turnAt = null;
    if (ms <= 60000 && (this._turns = (this._turns || 0) + 1) <= 500) this._track('turn_latency', { latency_ms: ms });
  }

  // _track queues an analytics event of the session; they go in batches,
  // once the session has its id (a line typed while it connects waits).
  _track(type, data, now) {
    this._events.push({ type, at: new Date().toISOString(), data });
    if (!this.id) return;
    if (now || this._events.length >= 20) this._flush(now === 'keepalive');
    else if (!this._timer) this._timer = setTimeout(() => this._flush(), 5000);
  }

  _flush(keepalive) {
    clearTimeout(this._timer);
    this._timer = null;
    if (!this._events.length || !this.id) return;
    this.client.request('analytics', { session_id: this.id, events: this._events.splice(0, 100) }, keepalive).catch(() => {});
  }
}
