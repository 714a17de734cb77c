/**
 * The one error family. Anything thrown as an `ApiError` is rendered by the server as the
 * envelope `{data: null, messages, succeeded: false}` with `status`; core services throw it too,
 * so a repository's conflict or a catalog's "not found" reaches the client unchanged.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly messages: string[];
  /** Extra response headers, e.g. `WWW-Authenticate` on 401. */
  readonly headers: Record<string, string>;

  constructor(status: number, messages: string | string[], headers: Record<string, string> = {}) {
    const list = Array.isArray(messages) ? messages : [messages];
    super(list.join('; '));
    this.name = 'ApiError';
    this.status = status;
    this.messages = list;
    this.headers = headers;
  }
}

export const badRequest = (messages: string | string[]) => new ApiError(400, messages);
export const notFound = (message: string) => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);
export const unavailable = (message: string) => new ApiError(503, message);
