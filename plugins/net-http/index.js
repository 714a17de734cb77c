// @ts-check
/* global fetch, Headers, AbortSignal -- web APIs built into Node */

/**
 * @typedef {{ url: string, method: string, headers: Record<string, string | number | boolean>,
 *   query: Record<string, unknown>, body?: unknown, timeoutMilliseconds: number,
 *   responseType: 'auto' | 'json' | 'text', failOnHttpError: boolean, allowedStatusCodes: number[] }} Parameters
 * @typedef {{ baseUrl?: string, headers?: Record<string, string>, bearerToken?: string }} Settings
 */

/**
 * @param {string} message
 * @param {boolean} [retryable]
 */
const failure = (message, retryable = false) =>
  Object.assign(new Error(message), { nonRetryable: !retryable });

/**
 * @param {Parameters} parameters
 * @param {{ specifications: Settings, signal: AbortSignal }} context
 */
export async function execute(parameters, context) {
  const settings = context.specifications;
  const url = buildUrl(parameters, settings);
  const method = parameters.method.toUpperCase();
  const headers = new Headers();
  for (const [name, value] of Object.entries({ ...settings.headers, ...parameters.headers })) {
    headers.set(name, String(value));
  }
  if (settings.bearerToken && !headers.has('authorization')) {
    headers.set('authorization', `Bearer ${settings.bearerToken}`);
  }
  /** @type {string | undefined} */
  let body;
  if (parameters.body !== undefined && parameters.body !== null) {
    const isText = typeof parameters.body === 'string';
    body = isText ? /** @type {string} */ (parameters.body) : JSON.stringify(parameters.body);
    if (!headers.has('content-type')) {
      headers.set('content-type', isText ? 'text/plain; charset=utf-8' : 'application/json');
    }
  }

  const timeout = AbortSignal.timeout(parameters.timeoutMilliseconds);
  /** @type {Response} */
  let response;
  let text;
  try {
    response = await fetch(url, {
      method,
      headers,
      body,
      signal: AbortSignal.any([context.signal, timeout]),
    });
    text = await response.text();
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    if (timeout.aborted) {
      throw failure(`${method} ${url} timed out after ${parameters.timeoutMilliseconds} ms`, true);
    }
    const cause = /** @type {{ cause?: { message?: string } }} */ (error).cause;
    throw failure(
      `${method} ${url} failed: ${cause?.message ?? /** @type {Error} */ (error).message}`,
      true,
    );
  }

  const result = {
    status: response.status,
    statusText: response.statusText,
    ok: response.ok,
    url: response.url || url.href,
    headers: Object.fromEntries(response.headers),
    body: readBody(text, response.headers.get('content-type'), parameters.responseType),
  };
  const allowed =
    response.ok ||
    !parameters.failOnHttpError ||
    parameters.allowedStatusCodes.includes(response.status);
  if (!allowed) {
    // Client errors repeat on retry, except throttling and timeouts; server errors may pass.
    const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
    throw failure(
      `${method} ${url} returned HTTP ${response.status} ${response.statusText}: ${text.slice(0, 500)}`,
      retryable,
    );
  }
  return result;
}

/**
 * @param {Parameters} parameters
 * @param {Settings} settings
 */
function buildUrl(parameters, settings) {
  let url;
  try {
    url = settings.baseUrl ? new URL(parameters.url, settings.baseUrl) : new URL(parameters.url);
  } catch {
    throw failure(
      `url "${parameters.url}" is not a valid absolute URL (or relative to the baseUrl setting)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw failure(`url "${parameters.url}" must be http or https`);
  }
  for (const [name, value] of Object.entries(parameters.query)) {
    for (const item of Array.isArray(value) ? value : [value])
      url.searchParams.append(name, String(item));
  }
  return url;
}

/**
 * @param {string} text
 * @param {string | null} contentType
 * @param {'auto' | 'json' | 'text'} responseType
 */
function readBody(text, contentType, responseType) {
  const looksJson = /\bjson\b/i.test(contentType ?? '');
  if (responseType === 'text' || (responseType === 'auto' && !looksJson) || text === '')
    return text;
  try {
    return JSON.parse(text);
  } catch (error) {
    if (responseType === 'auto') return text;
    throw failure(`response body is not valid JSON: ${/** @type {Error} */ (error).message}`);
  }
}
