import type { HandlerMap } from '../handler.js';
import { callerOf, projectsOf } from '../projects/request-project.js';

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
      projects: await projectsOf(deps.db, deps.config, callerOf(req)),
    },
  }),
} satisfies Partial<HandlerMap>;
