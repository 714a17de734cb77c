import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Unavailable } from '#definition/errors.js';
import { createLogger } from './logging.js';
import { waitUntilReachable, type WaitOptions } from './startup.js';

function recorder() {
  const messages: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        messages.push((JSON.parse(line) as { msg: string }).msg);
      }
      done();
    },
  });
  return { messages, logger: createLogger({ Level: 'info' }, {}, stream) };
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const options = (logger: WaitOptions['logger'], waitSeconds: number): WaitOptions => ({
  what: 'PostgreSQL at db:5432/trellis',
  waitSeconds,
  advice: 'Check Database.Url.',
  retryable: (error) => (error as { code?: string }).code === 'ECONNREFUSED',
  logger,
  firstDelayMs: 20,
  maxDelayMs: 40,
});

describe('waitUntilReachable', () => {
  it('tries again while the service is not reachable, a line per try, until it answers', async () => {
    const { messages, logger } = recorder();
    let tries = 0;
    const answer = await waitUntilReachable(
      async () => {
        if (++tries < 4) throw refused();
        return 'connected';
      },
      options(logger, 10),
    );
    expect(answer).toBe('connected');
    expect(messages).toEqual([
      ...Array.from({ length: 3 }, (): unknown =>
        expect.stringMatching(
          /^PostgreSQL at db:5432\/trellis is not reachable yet \(connect ECONNREFUSED 127.0.0.1:5432\); trying again in 0\.0 s$/,
        ),
      ),
      'PostgreSQL at db:5432/trellis answered',
    ]);
  });

  it('throws a mistake at once, and gives up after waitSeconds saying what to check', async () => {
    const { logger } = recorder();
    const denied = Object.assign(new Error('password authentication failed'), { code: '28P01' });
    let tries = 0;
    await expect(
      waitUntilReachable(
        async () => {
          tries++;
          throw denied;
        },
        options(logger, 10),
      ),
    ).rejects.toBe(denied);
    expect(tries).toBe(1);

    const failure = waitUntilReachable(
      async () => {
        throw refused();
      },
      options(logger, 0.2),
    );
    await expect(failure).rejects.toThrow(Unavailable);
    await expect(failure).rejects.toThrow(
      /^PostgreSQL at db:5432\/trellis did not answer in 0 s \(\d+ tries, Startup\.WaitSeconds is 0\.2\): connect ECONNREFUSED 127\.0\.0\.1:5432\. Check Database\.Url\.$/,
    );
  });

  it('stops waiting when the start is interrupted', async () => {
    const { logger } = recorder();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(
      waitUntilReachable(
        async () => {
          throw refused();
        },
        { ...options(logger, 60), firstDelayMs: 10_000, signal: controller.signal },
      ),
    ).rejects.toThrow(/abort/i);
  });
});
