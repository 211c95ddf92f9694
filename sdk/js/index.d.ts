// Type declarations of @agentline/client (index.js).

export interface ClientOptions {
  /** agentline's base URL, e.g. "https://agentline.example.com"; default: the page's origin. */
  baseUrl?: string;
  /** The channel's widget key, "svc_pk_...". Not needed with token and endpoint. */
  publicKey?: string;
  /**
   * A console test session: the signed-in user's session token, sent as
   * Authorization: Bearer instead of X-API-Key. Used with endpoint.
   */
  token?: string;
  /**
   * The path that replaces /widget/v1 for session start, tool calls and
   * analytics, e.g. "/api/agents/3/test-session" (POST it to start, and
   * /tools/execute and /analytics under it). Give startSession the agentId.
   */
  endpoint?: string;
}

/** The answer of GET /widget/v1/config. */
export interface WidgetConfig {
  project: { id: number; name: string; branding: { display_name?: string; [k: string]: unknown } };
  channel: {
    id: number;
    type: "voice_widget" | "form";
    settings: {
      color?: string;
      position?: "bottom-right" | "bottom-left";
      show_transcript?: boolean;
      show_text_chat?: boolean;
      [k: string]: unknown;
    };
    form_gate: boolean;
  };
  agents: Array<{ id: number; name: string; provider: "openai" | "gemini"; voice: string; language: string }>;
}

export interface StartOptions {
  /** The channel's agent (number, or a string of digits); default: the first agent of config(). */
  agentId?: number | string;
  /** A pending session to continue (a live chat form's submission answers one). */
  sessionId?: string;
  /**
   * A text session: no microphone and no audio. The visitor types with
   * sendText and the agent answers in text (the provider's text modality:
   * POST /widget/v1/session with modality "text"; a Gemini native-audio
   * model speaks, and its answer is the transcription, not played).
   */
  textOnly?: boolean;
  /**
   * The conversation so far, given to the provider before the session goes
   * live, without an answer: how a text chat goes on by voice in a new
   * session.
   */
  history?: Array<{ role: "user" | "assistant"; text: string }>;
  /** Where the agent's voice plays (OpenAI-compatible agents); default: a new Audio(). */
  audioElement?: HTMLAudioElement;
}

export type SessionState = "idle" | "connecting" | "listening" | "speaking" | "ended";

export interface TranscriptEvent {
  /** The line's id: partial and final events of one line share it. */
  id: string;
  role: "user" | "assistant";
  /** The line so far (all of it when final). */
  text: string;
  /** What this event added ("" when final). */
  delta: string;
  final: boolean;
}

export interface ToolCallEvent {
  callId: string;
  name: string;
  /** As the provider sent them: a JSON string (OpenAI) or an object (Gemini). */
  arguments: string | Record<string, unknown>;
  /** What /widget/v1/tools/execute answered, as returned to the provider. */
  output: string;
  isError: boolean;
}

export interface EndEvent {
  /** Why it ended; a reason given to end() as it was given. */
  reason: "client" | "remote" | "error" | "pagehide" | (string & {});
  sessionId: string | null;
}

export type ErrorCode =
  | "origin_refused"
  | "invalid_key"
  | "rate_limited"
  | "provider_unavailable"
  | "microphone_denied"
  | "no_microphone"
  | "unsupported"
  | "network"
  | "invalid_request"
  | "forbidden"
  | "not_found"
  | "failed";

export declare class AgentlineError extends Error {
  readonly name: "AgentlineError";
  readonly code: ErrorCode;
  /** The HTTP status, 0 when there was none. */
  readonly status: number;
  /** Seconds to wait, with code "rate_limited". */
  readonly retryAfter?: number;
  /** The server's own error code, when it answered one. */
  readonly serverCode?: string;
}

export interface SessionEvents {
  state: SessionState;
  transcript: TranscriptEvent;
  toolCall: ToolCallEvent;
  error: AgentlineError;
  end: EndEvent;
}

export interface Session {
  /** agentline's session id, once POST /widget/v1/session answered. */
  readonly id: string | null;
  readonly provider: "openai" | "gemini" | null;
  readonly state: SessionState;
  readonly muted: boolean;
  /** A text session (startSession's textOnly). */
  readonly textOnly: boolean;
  /** Resolves when the conversation is live; rejects with the AgentlineError that ended it. */
  readonly ready: Promise<Session>;
  on<E extends keyof SessionEvents>(event: E, fn: (data: SessionEvents[E]) => void): this;
  off<E extends keyof SessionEvents>(event: E, fn: (data: SessionEvents[E]) => void): this;
  /** Sends a typed message; while connecting it waits to go when live. False when ended or empty. */
  sendText(text: string): boolean;
  /** Mutes the microphone (true, the default) or unmutes it (false). */
  mute(muted?: boolean): void;
  /**
   * Ends the conversation and reports the end, with reason (default
   * "client") in the session_ended analytics event and the end event.
   */
  end(reason?: string): void;
}

export interface Client {
  readonly baseUrl: string;
  readonly publicKey: string;
  /** GET /widget/v1/config, once per client. */
  config(): Promise<WidgetConfig>;
  /** Starts connecting at once; listen with on() right away. */
  startSession(options?: StartOptions): Session;
}

export declare function createClient(options: ClientOptions): Client;

/** How often a live session reports a heartbeat, in milliseconds. */
export declare const HEARTBEAT_MS: number;
