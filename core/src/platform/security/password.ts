import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashes for Basic users: `scrypt$N$r$p$saltB64$hashB64`. Configured passwords may also
 * be plain text (docs/ARCHITECTURE.md#configuration); both are compared in constant time.
 */

const cost = { N: 16384, r: 8, p: 1 } as const;
const keyLength = 32;
const saltLength = 16;
const hashPattern = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

/** Hashes a password with a fresh random salt. */
export async function hashPassword(plain: string): Promise<string> {
  const salt = randomBytes(saltLength);
  const hash = await derive(plain, salt, cost, keyLength);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), hash.toString('base64')].join(
    '$',
  );
}

/** True when `stored` is a well-formed hash produced by `hashPassword`. */
export function isHashed(stored: string): boolean {
  return parseHash(stored) !== undefined;
}

/** Checks a candidate against a stored hash or plain-text password, in constant time. */
export async function verifyPassword(stored: string, candidate: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) {
    // Digests have equal lengths, so the comparison time does not reveal the stored length.
    return timingSafeEqual(sha256(stored), sha256(candidate));
  }
  const actual = await derive(candidate, parsed.salt, parsed.cost, parsed.hash.length);
  return timingSafeEqual(actual, parsed.hash);
}

function parseHash(stored: string) {
  const match = hashPattern.exec(stored);
  if (!match) return undefined;
  const [, n, r, p, salt, hash] = match;
  const parsed = {
    cost: { N: Number(n), r: Number(r), p: Number(p) },
    salt: Buffer.from(salt!, 'base64'),
    hash: Buffer.from(hash!, 'base64'),
  };
  const { N, r: blockSize, p: parallel } = parsed.cost;
  const powerOfTwo = N > 1 && (N & (N - 1)) === 0;
  // Bounds keep a hostile or mistyped hash from costing unbounded memory or time.
  const sane =
    powerOfTwo &&
    N <= 2 ** 20 &&
    blockSize >= 1 &&
    blockSize <= 32 &&
    parallel >= 1 &&
    parallel <= 16;
  return sane && parsed.salt.length > 0 && parsed.hash.length >= 16 ? parsed : undefined;
}

function derive(
  password: string,
  salt: Buffer,
  { N, r, p }: { N: number; r: number; p: number },
  length: number,
): Promise<Buffer> {
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text.normalize('NFC'), 'utf8').digest();
}
