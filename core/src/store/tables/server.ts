/** The tables the API keeps for itself: secrets, idempotency keys, failed logins. */
import type { ColumnType } from 'kysely';
import type { CreatedAt } from './columns.js';
import type { ProjectIdColumn } from './projects.js';

/** Secrets the server keeps in the database, shared by every process (the links' HMAC key). */
export interface ServerSecretTable {
  name: string;
  value: string;
}
export interface IdempotencyKeyTable {
  userName: string;
  /** The project the request worked in: a key is the user's within one project. */
  projectId: ProjectIdColumn;
  /** The client's `Idempotency-Key`. */
  key: string;
  /** sha256 of the operation, its parameters and body: what "the same request" means. */
  requestHash: string;
  /** The first response, once there is one; null while the first request runs. */
  responseStatus: number | null;
  response: ColumnType<unknown, string | null | undefined, string | null>;
  createdAt: CreatedAt;
}
/** Failed logins of one user name (`user:<name>`) or client address (`address:<ip>`). */
export interface AuthFailureTable {
  key: string;
  /** Failures since `windowStartedAt`. */
  failures: number;
  windowStartedAt: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Set once `failures` reached the limit: logins are refused until then. */
  lockedUntil: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}
