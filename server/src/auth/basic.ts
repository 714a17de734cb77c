import { randomUUID } from 'node:crypto';
import type { TrellisConfig } from '#platform/config/types.js';
import { HttpError } from '../http-error.js';
import type { Logger } from '#platform/logging.js';
import { hashPassword, isHashed, verifyPassword } from '#platform/security/password.js';
import { CredentialCache } from './credential-cache.js';
import type { LoginGuard } from './login-guard.js';
import type { AuthUser } from './user.js';

const invalidCredentials = () => new HttpError(401, 'Invalid username or password.');

/** Reads `Basic base64(name:password)`; null when the header is not Basic at all. */
export function parseBasicHeader(header: string): { name: string; password: string } | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Warns once per user whose password is stored as plain text rather than an scrypt hash. */
export function warnAboutPlainTextPasswords(
  settings: TrellisConfig['Security']['Basic'],
  logger: Logger,
): void {
  if (!settings.Enabled) return;
  for (const user of settings.Users) {
    if (!isHashed(user.Password)) {
      logger.warn(
        { user: user.Name },
        'Basic user has a plain-text password; store an scrypt hash (npm run hash-password)',
      );
    }
  }
}

/**
 * Checks Basic credentials against the configured users. Every check is one scrypt
 * verification, so its time does not tell which names exist nor how a password is configured:
 * plain-text passwords are hashed once (on first use), and an unknown name is checked against a
 * decoy hash with the same cost as `npm run hash-password`'s. Verified headers are cached
 * briefly. With a `guard`, locked names and addresses are refused and failures counted.
 */
export function createBasicAuthenticator(
  settings: TrellisConfig['Security']['Basic'],
  guard: LoginGuard | null = null,
) {
  let hashes: Promise<Map<string, string>> | undefined;
  const hashed = () =>
    (hashes ??= Promise.all(
      settings.Users.map(async (user) => {
        const hash = isHashed(user.Password) ? user.Password : await hashPassword(user.Password);
        return [user.Name, hash] as const;
      }),
    ).then((entries) => new Map(entries)));
  const users = new Map(settings.Users.map((user) => [user.Name, user]));
  const cache = new CredentialCache<AuthUser>();
  let decoy: Promise<string> | undefined;

  return async function authenticateBasic(header: string, address = ''): Promise<AuthUser> {
    const cached = cache.get(header);
    if (cached) {
      guard?.beforeCached(cached.name);
      return cached;
    }
    const credentials = parseBasicHeader(header);
    if (!credentials) throw new HttpError(401, 'The Basic credentials are malformed.');
    const { hadFailures } = (await guard?.beforeVerifying(credentials.name, address)) ?? {};
    const user = users.get(credentials.name);
    const stored = user
      ? (await hashed()).get(user.Name)!
      : await (decoy ??= hashPassword(randomUUID()));
    const matches = await verifyPassword(stored, credentials.password);
    if (!user || !matches) {
      await guard?.failed(credentials.name, address);
      throw invalidCredentials();
    }
    await guard?.succeeded(user.Name, hadFailures ?? false);
    const authenticated: AuthUser = { name: user.Name, roles: [...user.Roles] };
    cache.set(header, authenticated);
    return authenticated;
  };
}
