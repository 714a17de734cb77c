// @ts-check
/* global AbortSignal -- a web API built into Node */
import { networkFence } from '@trellis/plugin-kit';
import { Agent, buildConnector, fetch, Headers } from 'undici';

/**
 * @typedef {{ url: string, method: string, headers: Record<string, string | number | boolean>,
 *   query: Record<string, unknown>, body?: unknown, timeoutMilliseconds: number,
 *   responseType: 'auto' | 'json' | 'text', failOnHttpError: boolean, allowedStatusCodes: number[] }} Parameters
 * @typedef {{ baseUrl?: string, headers?: Record<string, string>, bearerToken?: string }} Settings
 * @typedef {{ denyCidrs: readonly string[], trellisEndpoints: readonly { host: string, port: number }[],
 *   allowCidrs: readonly string[], defaultDenyCidrs: readonly string[] }} NetworkFence
 * @typedef {{ traceparent: string, tracestate?: string }} TraceContext
 * @typedef {{ specifications: Settings, signal: AbortSignal, host: { network?: NetworkFence },
 *   task: { idempotencyKey: string }, trace?: TraceContext }} Context
 */

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;

/**
 * @param {string} message
 * @param {boolean} [retryable]
 */
const failure = (message, retryable = false) =>
  Object.assign(new Error(message), { nonRetryable: !retryable });

/**
 * The configuration's headers and bearer token go only to the origin of its `baseUrl`: a task's
 * `url` elsewhere is refused, and a redirect elsewhere is followed without them. Every
 * connection, redirects included, goes to an address the host's network fence allows, checked
 * after DNS resolution on the very addresses connected to.
 * @param {Parameters} parameters
 * @param {Context} context
 */
export async function execute(parameters, context) {
  const settings = context.specifications;
  const url = buildUrl(parameters, settings);
  const credentialOrigin = settings.baseUrl ? new URL(settings.baseUrl).origin : undefined;
  if (settings.bearerToken && !credentialOrigin) {
    throw failure('the bearerToken setting needs a baseUrl: the token is sent only to its origin');
  }
  if (credentialOrigin && url.origin !== credentialOrigin) {
    throw failure(
      `url "${parameters.url}" is outside ${credentialOrigin}, the origin of the baseUrl setting; ` +
        "this configuration's credentials go only there (use a task without it for other sites)",
    );
  }
  let method = parameters.method.toUpperCase();
  const taskHeaders = Object.entries(parameters.headers);
  /** @param {URL} target */
  const headersFor = (target) => {
    const own = target.origin === credentialOrigin;
    const headers = new Headers();
    for (const [name, value] of [
      ...Object.entries(own ? (settings.headers ?? {}) : {}),
      ...taskHeaders,
    ]) {
      headers.set(name, String(value));
    }
    // As browsers do: the task's own Authorization does not follow a redirect to another origin.
    if (!own && target.origin !== url.origin) headers.delete('authorization');
    if (own && settings.bearerToken && !headers.has('authorization')) {
      headers.set('authorization', `Bearer ${settings.bearerToken}`);
    }
    // The run's trace goes on to the service called, unless the task sends a trace of its own.
    if (context.trace && !headers.has('traceparent')) {
      headers.set('traceparent', context.trace.traceparent);
      if (context.trace.tracestate) headers.set('tracestate', context.trace.tracestate);
    }
    // Delivery is at least once (a worker killed mid-request sends it again): the attempt's key
    // lets the receiver deduplicate. A header of the task's or the configuration's wins; an empty
    // one sends none.
    if (!headers.has('idempotency-key')) {
      headers.set('idempotency-key', context.task.idempotencyKey);
    } else if (headers.get('idempotency-key') === '') {
      headers.delete('idempotency-key');
    }
    return headers;
  };
  /** @type {string | undefined} */
  let body;
  /** @type {string | undefined} */
  let contentType;
  if (parameters.body !== undefined && parameters.body !== null) {
    const isText = typeof parameters.body === 'string';
    body = isText ? /** @type {string} */ (parameters.body) : JSON.stringify(parameters.body);
    contentType = isText ? 'text/plain; charset=utf-8' : 'application/json';
  }

  const timeout = AbortSignal.timeout(parameters.timeoutMilliseconds);
  const signal = AbortSignal.any([context.signal, timeout]);
  const dispatcher = fencedAgent(context.host.network);
  let target = url;
  /** @type {import('undici').Response} */
  let response;
  let text;
  try {
    for (let redirects = 0; ; redirects++) {
      const headers = headersFor(target);
      if (body !== undefined && contentType && !headers.has('content-type')) {
        headers.set('content-type', contentType);
      }
      response = await fetch(target, {
        method,
        headers,
        body,
        signal,
        dispatcher,
        redirect: 'manual',
      });
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || location === null) break;
      await response.body?.cancel();
      if (redirects === MAX_REDIRECTS) {
        throw failure(`${method} ${url} was redirected more than ${MAX_REDIRECTS} times`);
      }
      const next = new URL(location, target);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        throw failure(`${method} ${target} redirected to ${next.protocol} URL, not http or https`);
      }
      // What fetch does: 303 (and 301/302 after a POST) continue as a GET without the body.
      if (
        (response.status === 303 && method !== 'HEAD') ||
        (response.status <= 302 && method === 'POST')
      ) {
        method = 'GET';
        body = undefined;
      }
      target = next;
    }
    text = await response.text();
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    if (timeout.aborted) {
      throw failure(`${method} ${url} timed out after ${parameters.timeoutMilliseconds} ms`, true);
    }
    if (/** @type {{ nonRetryable?: boolean }} */ (error).nonRetryable) throw error;
    const cause = /** @type {{ cause?: { message?: string, fenced?: boolean } }} */ (error).cause;
    if (cause?.fenced) throw failure(`${method} ${target} refused: ${cause.message}`);
    throw failure(
      `${method} ${target} failed: ${cause?.message ?? /** @type {Error} */ (error).message}`,
      true,
    );
  } finally {
    void dispatcher.close().catch(() => {});
  }

  const result = {
    status: response.status,
    statusText: response.statusText,
    ok: response.ok,
    url: target.href,
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
    // The token is taken out before the body is cut: a cut token would no longer match whole.
    const shown = settings.bearerToken ? text.split(settings.bearerToken).join('********') : text;
    throw failure(
      `${method} ${target} returned HTTP ${response.status} ${response.statusText}: ${shown.slice(0, 500)}`,
      retryable,
    );
  }
  return result;
}

/**
 * An undici dispatcher whose every connection first resolves the host name, checks each address
 * against the fence, and then connects only to the addresses it checked (no second lookup that
 * DNS rebinding could answer differently).
 * @param {NetworkFence | undefined} fence
 */
function fencedAgent(fence) {
  const { allowedAddresses } = networkFence(fence);
  /** @type {import('undici').buildConnector.connector} */
  const connect = (options, callback) => {
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    allowedAddresses(options.hostname, port).then(
      (addresses) => {
        /** @type {import('node:net').LookupFunction} */
        const pinned = (_hostname, lookupOptions, done) => {
          if (lookupOptions.all) done(null, addresses);
          else done(null, addresses[0]?.address ?? '', addresses[0]?.family);
        };
        buildConnector({ lookup: pinned })(options, callback);
      },
      (error) => callback(error, null),
    );
  };
  return new Agent({ connect });
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
