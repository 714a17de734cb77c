import type { TrellisConfig } from '#platform/config/types.js';
import { HttpError } from '../http-error.js';

/**
 * The execution event streams one API process holds open: at most `MaxStreamsPerUser` for one
 * user and `MaxStreams` for everyone (`Server.Events`), so that streams nobody reads cannot
 * take the process from everyone else.
 */
export interface EventStreamSlots {
  /** A slot for one more stream of the user, freed by the function returned (once); 429 past either cap. */
  take(userName: string): () => void;
}

/** Seconds a refused client is told to wait: streams are freed as their clients close them. */
const retryAfterSeconds = 10;

export function createEventStreamSlots(
  limits: Pick<TrellisConfig['Server']['Events'], 'MaxStreamsPerUser' | 'MaxStreams'>,
): EventStreamSlots {
  const openByUser = new Map<string, number>();
  let open = 0;
  return {
    take(userName) {
      const mine = openByUser.get(userName) ?? 0;
      if (mine >= limits.MaxStreamsPerUser) {
        throw tooManyStreams(
          `User "${userName}" has ${mine} event streams open, the most one user may (Server.Events.MaxStreamsPerUser): close one you no longer read, then try again.`,
        );
      }
      if (open >= limits.MaxStreams) {
        throw tooManyStreams(
          `This API process has ${open} event streams open, the most it serves (Server.Events.MaxStreams): try again in ${retryAfterSeconds} s, or through another API process.`,
        );
      }
      openByUser.set(userName, mine + 1);
      open += 1;
      let freed = false;
      return () => {
        if (freed) return;
        freed = true;
        open -= 1;
        const left = (openByUser.get(userName) ?? 1) - 1;
        if (left > 0) openByUser.set(userName, left);
        else openByUser.delete(userName);
      };
    },
  };
}

function tooManyStreams(message: string): HttpError {
  return new HttpError(429, [{ code: 'events.too_many_streams', message }], {
    'Retry-After': String(retryAfterSeconds),
  });
}
