// @ts-check
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';

const HEARTBEAT_EVERY_MS = 5_000;

/**
 * Resolves after `milliseconds`, heartbeating meanwhile; rejects with the signal's reason as
 * soon as the task is canceled or times out.
 * @type {import('@trellis/plugin-kit').PluginExecute<{ milliseconds: number }>}
 */
export async function execute(parameters, context) {
  const { milliseconds } = parameters;
  const started = Date.now();
  await new Promise((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      clearInterval(beat);
      context.signal.removeEventListener('abort', abort);
    };
    const abort = () => {
      finish();
      reject(context.signal.reason);
    };
    const timer = setTimeout(() => {
      finish();
      resolve(undefined);
    }, milliseconds);
    const beat = setInterval(
      () => context.heartbeat({ waitedMilliseconds: Date.now() - started }),
      HEARTBEAT_EVERY_MS,
    );
    if (context.signal.aborted) abort();
    else context.signal.addEventListener('abort', abort, { once: true });
  });
  return { delayedMilliseconds: milliseconds };
}
