import type { Role } from '../../../core/src/config/types.js';

/** The authenticated caller, as handlers and request logs see it (`req.user`). */
export interface AuthUser {
  name: string;
  roles: Role[];
}

declare module 'express-serve-static-core' {
  interface Request {
    /** Set once the request is authenticated; absent on public operations. */
    user?: AuthUser;
  }
}
