import type { HandlerMap } from '../handler.js';

/** `GET /me`: the caller as authentication made it, for clients that adapt to the roles. */
export const accountHandlers = {
  getCurrentUser: async ({ user, req }) => ({
    data: {
      name: user.name,
      roles: [...user.roles],
      // The authorizer accepted the header in one of the two schemes; its first word says which.
      scheme: /^bearer\s/i.test(req.headers.authorization ?? '') ? 'Bearer' : 'Basic',
    },
  }),
} satisfies Partial<HandlerMap>;
