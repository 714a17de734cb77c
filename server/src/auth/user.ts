import type { Role } from '#platform/config/types.js';
import type { ProjectLimits } from '#store/tables.js';

/** The authenticated caller, as handlers and request logs see it (`req.user`). */
export interface AuthUser {
  name: string;
  roles: Role[];
  /**
   * Set when the caller is a project's API key: it acts in that project only, with `roles`
   * there, and never as an instance admin.
   */
  apiKey?: { id: string; project: { id: string; name: string }; limits: ProjectLimits };
  /**
   * The groups a single sign-on token names (`Security.Oidc.GroupsClaim`): members
   * `group:<name>`. Present, if empty, exactly for tokens of the single sign-on issuer.
   */
  groups?: string[];
}
