import type { Role } from '#platform/config/types.js';

/** The authenticated caller, as handlers and request logs see it (`req.user`). */
export interface AuthUser {
  name: string;
  roles: Role[];
}
