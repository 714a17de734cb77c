/**
 * The errors core raises on purpose: what went wrong in the domain, never how a transport
 * reports it. Each kind has a stable `code` (for logs and callers that branch on it) and one or
 * more messages a user may read; the server alone decides which HTTP status each kind becomes.
 */

/** The stable code of each kind of {@link TrellisError}. */
export type TrellisErrorCode = 'invalid' | 'not_found' | 'conflict' | 'unavailable';

export abstract class TrellisError extends Error {
  abstract readonly code: TrellisErrorCode;
  /** What was wrong, one problem per message, in words a user can act on. */
  readonly messages: string[];

  constructor(messages: string | readonly string[], options?: ErrorOptions) {
    const list = typeof messages === 'string' ? [messages] : [...messages];
    super(list.join('; '), options);
    this.name = new.target.name;
    this.messages = list;
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
