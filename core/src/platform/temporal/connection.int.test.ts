import { isGrpcDeadlineError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServices } from '../../../../test/support/services.js';
import { createLogger } from '../logging.js';
import { connectTemporal, type TemporalConnection } from './connection.js';

let temporal: TemporalConnection;

beforeAll(async () => {
  temporal = await connectTemporal(
    { Address: testServices().temporalAddress, Namespace: 'default', Tls: {} },
    createLogger({ Level: 'silent' }),
  );
});

afterAll(async () => {
  await temporal.connection.close();
});

describe('the Temporal connection', () => {
  const storage = () => temporal.connection.callContextStorage;
  const withDeadline = <T>(timeoutMs: number, call: () => Promise<T>) =>
    temporal.client.withDeadline(Date.now() + timeoutMs, call);

  it('gives calls their deadline and fails them once it passes', async () => {
    const seen = await withDeadline(5_000, async () => storage().getStore());
    expect(seen?.deadline).toBeGreaterThan(Date.now());

    const failure = await withDeadline(0, () =>
      temporal.connection.workflowService.describeNamespace({ namespace: 'default' }),
    ).catch((error: unknown) => error);
    expect(isGrpcDeadlineError(failure)).toBe(true);
  });

  it("keeps a call's context while another call ends beside it", async () => {
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const first = withDeadline(5_000, async () => {
      await blocked;
      return storage().getStore();
    });
    await withDeadline(5_000, () =>
      temporal.connection.workflowService.describeNamespace({ namespace: 'default' }),
    );
    release();
    expect((await first)?.deadline).toBeGreaterThan(Date.now());
  });

  // Node 24 keeps AsyncLocalStorage in async context frames, without async hooks: there a
  // continuation keeps the frame it was made in, and nothing costs anything to leave behind.
  const asyncHooksCarryContext = Number(process.versions.node.split('.')[0]) < 24;

  it.runIf(asyncHooksCarryContext)('leaves no call context behind once its calls end', async () => {
    let seenLater: unknown = 'not called';
    let fired!: () => void;
    const timerFired = new Promise<void>((resolve) => (fired = resolve));
    await withDeadline(5_000, async () => {
      // Work scheduled inside a call but running after it would inherit the context (and keep
      // async hooks alive) if the storage stayed enabled.
      setTimeout(() => {
        seenLater = storage().getStore();
        fired();
      }, 20);
    });
    await timerFired;
    expect(seenLater).toBeUndefined();
  });
});
