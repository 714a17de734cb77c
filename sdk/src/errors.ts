/**
 * A Trellis response with an error status. `messages` are the envelope's (what was wrong and
 * where); `body` is the parsed response body (the error envelope, or the health report of a 503
 * from `/health`).
 */
export class TrellisApiError extends Error {
  readonly status: number;
  readonly messages: string[];
  readonly body: unknown;

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

  constructor(status: number, messages: string[], body: unknown) {
    super(`Trellis API ${status}: ${messages.join('; ')}`);
    this.name = 'TrellisApiError';
    this.status = status;
    this.messages = messages;
    this.body = body;
  }

  /** Builds the error from a failed response and its parsed body. */
  static fromResponse(response: Response, body: unknown): TrellisApiError {
    return new TrellisApiError(response.status, messagesOf(body) ?? [describe(response)], body);
  }
}

function messagesOf(body: unknown): string[] | undefined {
  if (typeof body !== 'object' || body === null || !('messages' in body)) return undefined;
  const { messages } = body;
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  return messages.map(String);
}

const describe = (response: Response) => `${response.status} ${response.statusText}`.trim();
