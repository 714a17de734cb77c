import type { HandlerMap } from '../handler.js';
import { isInstanceAdmin, projectsOf } from '../projects/request-project.js';
import { callerOf } from '../request-context.js';

/**
 * `GET /me`: the caller as authentication made it, and its roles in each project it may work in,
 * for clients that adapt to the roles.
 */
export const accountHandlers = {
  getCurrentUser: async ({ deps, user, req }) => ({
    data: {
      name: user.name,
      roles: [...user.roles],
      // The authorizer accepted the header in one of the two schemes; its first word says which.
      scheme: /^bearer\s/i.test(req.headers.authorization ?? '') ? 'Bearer' : 'Basic',
      ...(user.groups ? { groups: [...user.groups] } : {}),
      projects: await projectsOf(deps.db, deps.config, callerOf(req)),
      ...(isInstanceAdmin(deps.config, callerOf(req)) ? { instanceAdmin: true } : {}),
    },
  }),

  /** `GET /auth/oidc`: what the console signs in with; nothing secret. */
  getSingleSignOn: async ({ deps }) => {
    const { Enabled, Issuer, ClientId, Scopes, DisplayName } = deps.config.Security.Oidc;
    if (!Enabled || Issuer === undefined || ClientId === undefined) {
      return { data: { enabled: false } };
    }
    return {
      data: {
        enabled: true,
        issuer: Issuer,
        clientId: ClientId,
        scopes: Scopes,
        displayName: DisplayName,
      },
    };
  },
} satisfies Partial<HandlerMap>;
