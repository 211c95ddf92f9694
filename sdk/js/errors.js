// AgentlineError is what the client throws and emits.

/** An error with a stable code; see index.d.ts for the codes. */
export class AgentlineError extends Error {
  constructor(code, message, status, retryAfter, serverCode) {
    super(message);
    this.name = 'AgentlineError';
    this.code = code;
    this.status = status || 0;
    if (retryAfter !== undefined) this.retryAfter = retryAfter;
    if (serverCode) this.serverCode = serverCode;
  }
}
