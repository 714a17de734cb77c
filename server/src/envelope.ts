import type { ServerResponse } from 'node:http';
import type { Pagination } from '#store/paging.js';
import type { Problem } from '#definition/errors.js';
import { renderProblem } from '#definition/validation/problem.js';
import { sendJson } from './respond.js';

/** The body of every JSON response except `/health`, the probes and the definition's schema. */
export interface Envelope<T> {
  data: T;
  messages: string[];
  succeeded: boolean;
  generatedAtUtc: string;
  pagination?: Pagination;
  /** On failure: the messages with their stable codes (and places, for input). */
  errors?: Problem[];
  /** On a 5xx failure: the request's id (`X-Request-Id`), which its log lines carry. */
  requestId?: string;
}

let clock = { millisecond: 0, text: '' };

/** Now in ISO 8601 (UTC); formatted once per millisecond however many responses share it. */
function nowUtc(): string {
  const millisecond = Date.now();
  if (millisecond !== clock.millisecond) {
    clock = { millisecond, text: new Date(millisecond).toISOString() };
  }
  return clock.text;
}

/** The envelope of a successful operation. */
export function successEnvelope<T>(
  data: T,
  messages: string[] = [],
  pagination?: Pagination,
): Envelope<T> {
  return {
    data,
    messages,
    succeeded: true,
    generatedAtUtc: nowUtc(),
    ...(pagination ? { pagination } : {}),
  };
}

/**
 * The envelope of a failed operation: `data` is null, `messages` say what was wrong, and
 * `errors` say it again with a stable code (and a place, for input) per message. The one place
 * the API renders problems into messages.
 */
export function errorEnvelope(problems: readonly Problem[], requestId?: string): Envelope<null> {
  return {
    data: null,
    messages: problems.map(renderProblem),
    succeeded: false,
    generatedAtUtc: nowUtc(),
    errors: problems.map((problem) => ({
      code: problem.code,
      message: renderProblem(problem),
      ...(problem.path === undefined ? {} : { path: problem.path }),
      ...(problem.suggestions === undefined ? {} : { suggestions: problem.suggestions }),
    })),
    ...(requestId === undefined ? {} : { requestId }),
  };
}

/**
 * Sends a failure as the envelope with its status and extra headers; a 5xx carries the request's
 * id, so that whoever reports it points at its log lines.
 */
export function sendErrorEnvelope(
  res: ServerResponse,
  status: number,
  problems: readonly Problem[],
  headers: Record<string, string> = {},
): void {
  const requestId = status >= 500 ? res.req.requestId : undefined;
  sendJson(res, status, errorEnvelope(problems, requestId), headers);
}
