import type { Role } from '#platform/config/types.js';

/** The authenticated caller, as handlers and request logs see it (`req.user`). */
export interface AuthUser {
  name: string;
  roles: Role[];
  /**
   * The groups a single sign-on token names (`Security.Oidc.GroupsClaim`): members
   * `group:<name>`. Present, if empty, exactly for tokens of the single sign-on issuer.
   */
  groups?: string[];
}
