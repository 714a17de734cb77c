import type { Problem } from '#definition/errors.js';
import { renderProblem } from '#definition/validation/problem.js';

/**
 * A failure only HTTP knows: no or bad credentials (401, with `WWW-Authenticate`), a wrong role
 * (403), a route or method the API does not serve (404, 405), a body that cannot be read (400,
 * 413, 415). What goes wrong in the domain is core's `TrellisError` instead.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly messages: string[];
  /** The messages with stable codes (`auth.unauthenticated`, `route.not_found`, ...). */
  readonly problems: Problem[];
  /** Extra response headers, e.g. `WWW-Authenticate` on 401. */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    messages: string | readonly string[] | readonly Problem[],
    headers: Record<string, string> = {},
  ) {
    const list = typeof messages === 'string' ? [messages] : [...messages];
    const problems = list.map((item) =>
      typeof item === 'string' ? { code: codeOfStatus(status), message: item } : item,
    );
    const rendered = problems.map(renderProblem);
    super(rendered.join('; '));
    this.name = 'HttpError';
    this.status = status;
    this.problems = problems;
    this.messages = rendered;
    this.headers = headers;
  }
}

/** The stable code of a failure only HTTP knows, by its status (README, "Error codes"). */
function codeOfStatus(status: number): string {
  switch (status) {
    case 400:
      return 'request.malformed';
    case 401:
      return 'auth.unauthenticated';
    case 403:
      return 'auth.forbidden';
    case 404:
      return 'route.not_found';
    case 405:
      return 'route.method_not_allowed';
    case 413:
      return 'request.too_large';
    case 415:
      return 'request.unsupported_media_type';
    case 429:
      return 'auth.rate_limited';
    default:
      return 'internal';
  }
}
