import { TrellisApiError } from '../errors.js';

/** A failure a tool explains itself (a name that matches nothing), with what to do about it. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** What went wrong in words, as a tool's error result tells it. */
export interface ToolFailure {
  /** The messages: the server's own for an API error. */
  messages: string[];
  status?: number;
  /** The error envelope's `errors` (stable codes). */
  errors?: { code: string; message: string; path?: string }[];
  hint?: string;
}

/** Explains an error a tool call ended with: the API's refusal as the API gave it. */
export function toolFailure(error: unknown): ToolFailure {
  if (error instanceof TrellisApiError) {
    return { messages: error.messages, status: error.status, errors: error.errors };
  }
  if (error instanceof ToolError) {
    return { messages: [error.message], ...(error.hint ? { hint: error.hint } : {}) };
  }
  return { messages: [error instanceof Error ? error.message : String(error)] };
}
