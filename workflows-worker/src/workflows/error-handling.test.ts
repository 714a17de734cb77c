import { describe, expect, it } from 'vitest';
import { failurePlan, failureSources, mergeErrorHandling } from './error-handling.js';

const never = () => 0.5;

describe('mergeErrorHandling', () => {
  it('defaults to Abort', () => {
    expect(mergeErrorHandling(undefined, undefined)).toEqual({ strategy: 'Abort' });
  });

  it('takes the workflow settings when the task has none', () => {
    const workflow = { strategy: 'Retry', retryPolicy: { maxRetries: 2 } } as const;
    expect(mergeErrorHandling(undefined, workflow)).toEqual(workflow);
  });

  it('lets the task override the strategy and retry fields one by one', () => {
    expect(
      mergeErrorHandling(
        { strategy: 'Retry', retryPolicy: { initialDelayMilliseconds: 10 } },
        { strategy: 'Skip', retryPolicy: { maxRetries: 5, initialDelayMilliseconds: 1000 } },
      ),
    ).toEqual({ strategy: 'Retry', retryPolicy: { maxRetries: 5, initialDelayMilliseconds: 10 } });
  });
});

describe('failurePlan', () => {
  it('retries with the policy delay until the retries are used up, then fails', () => {
    const handling = {
      strategy: 'Retry',
      retryPolicy: { maxRetries: 2, backoffStrategy: 'Exponential', initialDelayMilliseconds: 10 },
    } as const;
    expect(failurePlan(handling, 1, never)).toEqual({
      outcome: 'Retrying',
      delayMilliseconds: 10,
      retry: 1,
      maxRetries: 2,
    });
    expect(failurePlan(handling, 2, never)).toMatchObject({
      outcome: 'Retrying',
      delayMilliseconds: 20,
    });
    expect(failurePlan(handling, 3, never)).toEqual({ outcome: 'Failed' });
  });

  it('never retries with maxRetries 0', () => {
    expect(failurePlan({ strategy: 'Retry', retryPolicy: { maxRetries: 0 } }, 1, never)).toEqual({
      outcome: 'Failed',
    });
  });

  it('skips with Skip and fails with Abort and TriggerTask', () => {
    expect(failurePlan({ strategy: 'Skip' }, 1, never)).toEqual({ outcome: 'Skipped' });
    expect(failurePlan({ strategy: 'Abort' }, 1, never)).toEqual({ outcome: 'Failed' });
    expect(failurePlan({ strategy: 'TriggerTask', triggerTask: 'X' }, 1, never)).toEqual({
      outcome: 'Failed',
    });
  });
});

describe('failureSources', () => {
  it('adds TriggerTask sources to runOnFailureOf, from the task or the workflow', () => {
    const sources = failureSources(
      [
        { name: 'A', errorHandling: { strategy: 'TriggerTask', triggerTask: 'Alert' } },
        { name: 'B' },
        { name: 'Alert', runOnFailureOf: ['B'] },
        { name: 'Cleanup' },
      ],
      undefined,
    );
    expect(sources.get('Alert')).toEqual(['B', 'A']);
    expect(sources.get('A')).toEqual([]);

    const workflowWide = failureSources(
      [{ name: 'A' }, { name: 'B', errorHandling: { strategy: 'Abort' } }, { name: 'Alert' }],
      { strategy: 'TriggerTask', triggerTask: 'Alert' },
    );
    expect(workflowWide.get('Alert')).toEqual(['A']);
  });
});
