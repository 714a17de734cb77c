/**
 * The errors core raises on purpose: what went wrong in the domain, never how a transport
 * reports it. Each kind has a stable `code` (for logs and callers that branch on it) and one or
 * more messages a user may read; the server alone decides which HTTP status each kind becomes.
 * Each message is also a {@link Problem} with a finer stable code (`workflow.not_found`,
 * `validation.required`), which the API shows beside the messages so that programs need not
 * match message text.
 */
import { validationProblem } from './validation/problem-codes.js';

/** The stable code of each kind of {@link TrellisError}. */
export type TrellisErrorCode = 'invalid' | 'not_found' | 'conflict' | 'unavailable';

/** One problem: a stable code, the message, and (for input) where it is. */
export interface Problem {
  code: string;
  message: string;
  path?: string;
}

export interface TrellisErrorOptions extends ErrorOptions {
  /** The stable code of every message; by default the kind's (validation: by the message). */
  code?: string;
}

export abstract class TrellisError extends Error {
  abstract readonly code: TrellisErrorCode;
  /** What was wrong, one problem per message, in words a user can act on. */
  readonly messages: string[];
  private readonly problemCode: string | undefined;

  constructor(messages: string | readonly string[], options?: TrellisErrorOptions) {
    const list = typeof messages === 'string' ? [messages] : [...messages];
    super(list.join('; '), options);
    this.name = new.target.name;
    this.messages = list;
    this.problemCode = options?.code;
  }

  /** The messages with their stable codes (and places, for input). */
  get problems(): Problem[] {
    return this.messages.map((message) => {
      const problem: Problem =
        this.code === 'invalid' ? validationProblem(message) : { code: this.code, message };
      return this.problemCode === undefined ? problem : { ...problem, code: this.problemCode };
    });
  }
}

/** The input cannot be used; each message names a field or a problem. */
export class Invalid extends TrellisError {
  readonly code = 'invalid';
}

/** What was asked for does not exist. */
export class NotFound extends TrellisError {
  readonly code = 'not_found';
}

/** The request clashes with the current state (a duplicate, something in use, already decided). */
export class Conflict extends TrellisError {
  readonly code = 'conflict';
}

/** A dependency (the database, Temporal, a plugin registry) cannot serve the request now. */
export class Unavailable extends TrellisError {
  readonly code = 'unavailable';
}
