/**
 * The generated `admin` user of a Trellis with no users configured: a random
 * password, printed once when created, kept only as an scrypt hash in the data directory.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BasicUser } from '#platform/config/types.js';
import { hashPassword, isHashed } from '#platform/security/password.js';

export interface GeneratedAdmin {
  user: BasicUser;
  /** The plain password, only on the start that created it. */
  password?: string;
  /** Where the hash is kept; deleting it makes the next start generate a new password. */
  file: string;
}

/**
 * The generated admin: read from `<dataDirectory>/admin-user.json`, or a new one (with its
 * password) when there is none, which {@link keepGeneratedAdmin} stores once the start succeeded:
 * a start that fails creates no user whose password nobody saw.
 */
export async function generatedAdmin(dataDirectory: string): Promise<GeneratedAdmin> {
  const file = path.join(dataDirectory, 'admin-user.json');
  const existing = await readStoredUser(file);
  if (existing) return { user: existing, file };

  const password = randomBytes(18).toString('base64url');
  const user: BasicUser = {
    Name: 'admin',
    Password: await hashPassword(password),
    Roles: ['admin'],
  };
  return { user, password, file };
}

/** Keeps a new generated admin's hash for the starts after this one. */
export async function keepGeneratedAdmin({ user, file }: GeneratedAdmin): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(user, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
}

async function readStoredUser(file: string): Promise<BasicUser | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return null;
  }
  const stored = JSON.parse(text) as Partial<BasicUser>;
  // Only ever a hash: a file holding anything else is not ours to trust.
  if (
    typeof stored.Name !== 'string' ||
    typeof stored.Password !== 'string' ||
    !isHashed(stored.Password)
  ) {
    throw new Error(`${file} is not a generated admin user; delete it to generate a new one.`);
  }
  return { Name: stored.Name, Password: stored.Password, Roles: ['admin'] };
}
