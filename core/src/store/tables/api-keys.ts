/** The table of projects' API keys. */
import type { ColumnType, Selectable } from 'kysely';
import type { Role } from '#platform/config/types.js';
import type { CreatedAt, Timestamp } from './columns.js';

/** An API key of a project; its secret is not here, only the secret's SHA-256. */
export interface ApiKeyTable {
  id: string;
  projectId: ColumnType<string, string, never>;
  /** Unique in its project among keys not revoked. */
  name: ColumnType<string, string, never>;
  /** The key's public part (`trellis_<lookupId>_<secret>`), unique: how a key finds its row. */
  lookupId: ColumnType<string, string, never>;
  /** SHA-256 of the whole key. */
  hash: ColumnType<Buffer, Buffer, never>;
  roles: ColumnType<Role[], string, never>;
  createdBy: ColumnType<string, string, never>;
  createdAt: CreatedAt;
  expiresAt: ColumnType<Date | null, Date | string | null, never>;
  lastUsedAt: Timestamp | null;
  revokedAt: Timestamp | null;
}

export type ApiKeyRow = Selectable<ApiKeyTable>;
