import { describe, expect, it } from 'vitest';
import {
  checkWebhookProperties as checkWebhookPropertiesProblems,
  generateWebhookSecret,
  withoutSecret,
} from './webhook-properties.js';
import { renderProblem } from '#definition/validation/problem.js';

/** What a user reads of each problem. */
const checkWebhookProperties = (...args: Parameters<typeof checkWebhookPropertiesProblems>) => {
  const result = checkWebhookPropertiesProblems(...args);
  return result.ok ? result : { ...result, problems: result.problems.map(renderProblem) };
};

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe('checkWebhookProperties', () => {
  it('takes a signature and, to sign with, a Standard Webhooks secret', () => {
    expect(checkWebhookProperties({ signature: 'None' })).toEqual({
      ok: true,
      signature: 'None',
      secret: { kind: 'absent' },
    });
    expect(checkWebhookProperties({ Signature: 'StandardWebhooks', SECRET: secret })).toEqual({
      ok: true,
      signature: 'StandardWebhooks',
      secret: { kind: 'given', secret },
    });
    // What GET shows for a stored secret keeps it.
    expect(checkWebhookProperties({ signature: 'StandardWebhooks', secret: '********' })).toEqual({
      ok: true,
      signature: 'StandardWebhooks',
      secret: { kind: 'absent' },
    });
  });

  it('names each problem', () => {
    expect(checkWebhookProperties({})).toEqual({
      ok: false,
      problems: [
        'properties.signature: is required for a Webhook trigger ("StandardWebhooks" or "None")',
      ],
    });
    expect(checkWebhookProperties({ signature: 'HMAC' })).toMatchObject({
      problems: ['properties.signature: must be one of "StandardWebhooks", "None"'],
    });
    expect(checkWebhookProperties({ signature: 'None', secret })).toMatchObject({
      problems: [
        'properties.secret: is not allowed with signature "None" (only "StandardWebhooks" signs)',
      ],
    });
    const short = `whsec_${Buffer.alloc(16).toString('base64')}`;
    const long = `whsec_${Buffer.alloc(65).toString('base64')}`;
    for (const bad of ['plain', short, long, 'whsec_not*base64', 42, secret.slice(6)]) {
      expect(
        checkWebhookProperties({ signature: 'StandardWebhooks', secret: bad }),
        String(bad),
      ).toMatchObject({
        ok: false,
        problems: [expect.stringMatching(/^properties\.secret: must be "whsec_" followed by/)],
      });
    }
  });
});

describe('generateWebhookSecret', () => {
  it('makes a new valid secret each time', () => {
    const one = generateWebhookSecret();
    expect(one).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(generateWebhookSecret()).not.toBe(one);
    expect(checkWebhookProperties({ signature: 'StandardWebhooks', secret: one })).toMatchObject({
      ok: true,
    });
  });
});

describe('withoutSecret', () => {
  it('drops the secret, whatever its case, and keeps every other key as given', () => {
    expect(withoutSecret({ signature: 'None', Secret: 'x', note_Key: { a: 1 } })).toEqual({
      signature: 'None',
      note_Key: { a: 1 },
    });
  });
});
