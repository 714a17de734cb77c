/**
 * A Trellis response with an error status. `messages` are the envelope's (what was wrong and
 * where); `body` is the parsed response body (the error envelope, or the health report of a 503
 * from `/health`).
 */
export class TrellisApiError extends Error {
  readonly status: number;
  readonly messages: string[];
  readonly body: unknown;
  /**
   * Seconds the server asks the client to wait before trying again (`Retry-After` of a 429 or
   * 503: a project's limit, an API process's stream slots); undefined when it names none.
   */
  readonly retryAfterSeconds: number | undefined;

  /** The envelope's `errors`: each message with its stable code (e.g. `workflow.not_found`). */
  get errors(): { code: string; message: string; path?: string }[] {
    const body = this.body;
    if (typeof body !== 'object' || body === null || !('errors' in body)) return [];
    return Array.isArray(body.errors) ? (body.errors as TrellisApiError['errors']) : [];
  }

  /** The stable codes of `errors`, for branching without matching message text. */
  get codes(): string[] {
    return this.errors.map((error) => error.code);
  }

  constructor(status: number, messages: string[], body: unknown, retryAfterSeconds?: number) {
    super(`Trellis API ${status}: ${messages.join('; ')}`);
    this.name = 'TrellisApiError';
    this.status = status;
    this.messages = messages;
    this.body = body;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** Builds the error from a failed response and its parsed body. */
  static fromResponse(response: Response, body: unknown): TrellisApiError {
    const messages = messagesOf(body) ?? [describe(response)];
    return new TrellisApiError(response.status, messages, body, retryAfterOf(response));
  }
}

function messagesOf(body: unknown): string[] | undefined {
  if (typeof body !== 'object' || body === null || !('messages' in body)) return undefined;
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  return messages.map(String);
}

/** `Retry-After` in seconds (the server sends seconds, never a date). */
function retryAfterOf(response: Response): number | undefined {
  const value = response.headers.get('Retry-After');
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

const describe = (response: Response) => `${response.status} ${response.statusText}`.trim();
