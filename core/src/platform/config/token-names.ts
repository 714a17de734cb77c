import type { TrellisConfig } from './types.js';

/**
 * How callers who sign in with a token are named, where configuration checks names and
 * authentication gives them: a Basic user's name must never have one of these forms.
 */

/** What precedes a group's name among a project's members: `group:ops`. */
export const groupMemberPrefix = 'group:';

/**
 * What precedes a token's `sub` in its bearer's name: `Security.Bearer.UsernamePrefix` for tokens
 * of the Bearer section's issuer (the prefix requires one), else the token's issuer and `#`.
 */
export function tokenNamePrefix(
  issuer: string,
  bearer: Pick<TrellisConfig['Security']['Bearer'], 'Issuer' | 'UsernamePrefix'>,
): string {
  return bearer.UsernamePrefix !== undefined && bearer.Issuer === issuer
    ? bearer.UsernamePrefix
    : `${issuer}#`;
}
