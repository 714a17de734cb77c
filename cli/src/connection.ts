import { createTrellisClient, type TrellisClient, type TrellisClientOptions } from '@trellis/sdk';
import { UsageError } from './failures.js';

/** Where `npm start` serves Trellis by default. */
export const defaultUrl = 'http://127.0.0.1:6262';

/** The connection options every command takes (flags, else TRELLIS_* environment variables). */
export interface ConnectionOptions {
  url?: string;
  user?: string;
  password?: string;
  token?: string;
  /** The project to work in (id or name); the caller's default project when absent. */
  project?: string;
}

/** Where an option's value came from, as commander reports it. */
export type OptionSource = 'cli' | 'env' | 'default' | 'config' | 'implied' | undefined;

/**
 * The SDK client options for the given connection options: Basic with a user and password, Bearer
 * with a token. A flag beats an environment variable, so `--token` works where TRELLIS_USER is
 * set; given the same way, Basic and Bearer are refused together.
 */
export function clientOptions(
  options: ConnectionOptions,
  sourceOf: (name: keyof ConnectionOptions) => OptionSource = () => 'cli',
  userAgent?: string,
): TrellisClientOptions {
  const baseUrl = checkedUrl(options.url ?? defaultUrl);
  const headers = {
    ...(userAgent ? { headers: { 'User-Agent': userAgent } } : {}),
    ...(options.project === undefined ? {} : { project: options.project }),
  };
  let { user, token } = options;
  if (user !== undefined && token !== undefined) {
    const userSource = sourceOf('user');
    const tokenSource = sourceOf('token');
    if (userSource === tokenSource) {
      throw new UsageError(
        'Give either a user and password or a token, not both.',
        'Basic uses --user/--password (TRELLIS_USER/TRELLIS_PASSWORD); Bearer uses --token (TRELLIS_TOKEN).',
      );
    }
    if (tokenSource === 'cli') user = undefined;
    else token = undefined;
  }
  if (token !== undefined) {
    if (token === '') throw new UsageError('The token is empty (--token or TRELLIS_TOKEN).');
    return { baseUrl, bearer: token, ...headers };
  }
  if (user !== undefined) {
    if (options.password === undefined) {
      throw new UsageError(
        `No password for user "${user}".`,
        'Set TRELLIS_PASSWORD (or give --password).',
      );
    }
    return { baseUrl, basic: { username: user, password: options.password }, ...headers };
  }
  if (options.password !== undefined && sourceOf('password') === 'cli') {
    throw new UsageError('--password needs a user (--user or TRELLIS_USER).');
  }
  return { baseUrl, ...headers };
}

/** An SDK client for the given connection options. */
export function connect(
  options: ConnectionOptions,
  sourceOf?: (name: keyof ConnectionOptions) => OptionSource,
  userAgent?: string,
): TrellisClient {
  return createTrellisClient(clientOptions(options, sourceOf, userAgent));
}

function checkedUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(
      `"${text}" is not a URL.`,
      `Set TRELLIS_URL (or --url) to the server's root, e.g. ${defaultUrl}.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`"${text}" is not an http(s) URL.`, `e.g. ${defaultUrl}`);
  }
  return text.replace(/\/+$/, '');
}
