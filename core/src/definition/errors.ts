/**
 * The errors core raises on purpose: what went wrong in the domain, never how a transport
 * reports it. Each kind has a stable `code` (for logs and callers that branch on it) and one or
 * more {@link Problem}s, made where they were found, each with a finer stable code
 * (`workflow.not_found`, `validation.required`) and, for input, its place: the API shows them
 * beside the messages so that programs need not match message text. The server alone decides
 * which HTTP status each kind becomes.
 */
import { renderProblem, type Problem } from './validation/problem.js';

export type { Problem };

/** The stable code of each kind of {@link TrellisError}. */
export type TrellisErrorCode =
  'invalid' | 'forbidden' | 'not_found' | 'conflict' | 'too_many' | 'unavailable';

export interface TrellisErrorOptions extends ErrorOptions {
  /** The stable code of every problem given as a message (a Problem has its own); by default the kind's. */
  code?: string;
}

export abstract class TrellisError extends Error {
  abstract readonly code: TrellisErrorCode;
  private readonly given: ReadonlyArray<string | Problem>;
  private readonly problemCode: string | undefined;

  /** Each problem as data, or as a message (which then has the kind's code, or `options.code`). */
  constructor(
    problems: string | Problem | ReadonlyArray<string | Problem>,
    options?: TrellisErrorOptions,
  ) {
    const list: ReadonlyArray<string | Problem> =
      typeof problems === 'string' || !Array.isArray(problems)
        ? [problems as string | Problem]
        : problems;
    super(
      list.map((item) => (typeof item === 'string' ? item : renderProblem(item))).join('; '),
      options,
    );
    this.name = new.target.name;
    this.given = list;
    this.problemCode = options?.code;
  }

  /** What was wrong, one problem each, with their stable codes (and places, for input). */
  get problems(): Problem[] {
    const code = this.problemCode ?? (this.code === 'invalid' ? 'validation.invalid' : this.code);
    return this.given.map((item) => (typeof item === 'string' ? { code, message: item } : item));
  }

  /** The problems as a user reads them, one message each. */
  get messages(): string[] {
    return this.problems.map(renderProblem);
  }
}

/** The input cannot be used; each message names a field or a problem. */
export class Invalid extends TrellisError {
  readonly code = 'invalid';
}

/** The caller may not do this, whatever their role allows (an approval's approvers, say). */
export class Forbidden extends TrellisError {
  readonly code = 'forbidden';
}

/** What was asked for does not exist. */
export class NotFound extends TrellisError {
  readonly code = 'not_found';
}

/** The request clashes with the current state (a duplicate, something in use, already decided). */
export class Conflict extends TrellisError {
  readonly code = 'conflict';
}

/** The caller went past a limit of its share (a project's starts a minute); it may retry later. */
export class TooMany extends TrellisError {
  readonly code = 'too_many';
  /** Whole seconds until a retry may pass. */
  readonly retryAfterSeconds: number;

  constructor(
    problems: string | Problem | ReadonlyArray<string | Problem>,
    options: TrellisErrorOptions & { retryAfterSeconds: number },
  ) {
    super(problems, options);
    this.retryAfterSeconds = Math.max(1, Math.ceil(options.retryAfterSeconds));
  }
}

/** A dependency (the database, Temporal, a plugin registry) cannot serve the request now. */
export class Unavailable extends TrellisError {
  readonly code = 'unavailable';
}
