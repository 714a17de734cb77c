import { describe, expect, it } from 'vitest';
import {
  comesToSign,
  draftOf,
  newDraft,
  newWebhookSecret,
  previewFirings,
  propertiesOf,
  triggerSummary,
} from './triggers.js';

describe('previewFirings', () => {
  const from = new Date('2026-11-24T12:00:00Z');

  it('gives the next firings of a cron in its time zone', () => {
    const preview = previewFirings('0 6 * * *', 'Europe/Paris', 3, from);
    expect(preview).toEqual({
      ok: true,
      times: [
        new Date('2026-11-25T05:00:00Z'),
        new Date('2026-11-26T05:00:00Z'),
        new Date('2026-11-27T05:00:00Z'),
      ],
    });
    const utc = previewFirings('*/15 * * * *', '', 2, from);
    expect(utc).toEqual({
      ok: true,
      times: [new Date('2026-11-24T12:15:00Z'), new Date('2026-11-24T12:30:00Z')],
    });
  });

  it('says why an expression or zone cannot fire', () => {
    expect(previewFirings('0 6 * *', '', 3, from)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/5 fields/),
    });
    expect(previewFirings('0 25 * * *', '', 3, from)).toMatchObject({ ok: false });
    expect(previewFirings('0 6 * * *', 'Mars/Olympus', 3, from)).toMatchObject({
      ok: false,
      problem: '"Mars/Olympus" is not an IANA time zone (e.g. Europe/Berlin).',
    });
  });
});

describe('a trigger as the form edits it', () => {
  it('sends the schedule policies given, and keeps the properties it does not edit', () => {
    const draft = draftOf({
      id: 't',
      type: 'TimeBased',
      status: 'Active',
      lastModified: '2026-11-24T12:00:00Z',
      properties: { Cron: '0 6 * * *', jitter: '5m', inputs: { who: 'a' }, note: 'kept' },
    });
    expect(draft).toMatchObject({ cron: '0 6 * * *', jitter: '5m', others: { note: 'kept' } });
    expect(propertiesOf({ ...draft, overlap: 'BufferOne' })).toEqual({
      ok: true,
      properties: {
        cron: '0 6 * * *',
        jitter: '5m',
        overlap: 'BufferOne',
        inputs: { who: 'a' },
        note: 'kept',
      },
    });
    expect(propertiesOf({ ...newDraft, inputs: '[1]' })).toEqual({
      ok: false,
      problem: 'Inputs must be a JSON object: {"name": value, ...}',
    });
  });

  it('leaves a stored webhook secret out, so that it is kept', () => {
    const draft = draftOf({
      id: 't',
      type: 'Webhook',
      status: 'Active',
      lastModified: '2026-11-24T12:00:00Z',
      properties: { signature: 'StandardWebhooks', secret: '********' },
    });
    expect(propertiesOf(draft)).toEqual({
      ok: true,
      properties: { signature: 'StandardWebhooks' },
    });
    expect(triggerSummary({ type: 'Webhook', properties: { signature: 'None' } })).toBe('unsigned');
    expect(triggerSummary({ type: 'TimeBased', properties: { cron: '0 6 * * *' } })).toBe(
      '0 6 * * * (UTC)',
    );
  });
});

describe('a trigger that comes to sign', () => {
  const unsigned = {
    id: 't',
    type: 'Webhook' as const,
    status: 'Active' as const,
    lastModified: '2026-11-24T12:00:00Z',
    properties: { signature: 'None' },
  };

  it('needs a secret of its own, made here as Standard Webhooks makes them', () => {
    const signing = {
      type: 'Webhook',
      status: 'Active',
      properties: { signature: 'StandardWebhooks' },
    } as const;
    expect(comesToSign(unsigned, signing)).toBe(true);
    expect(
      comesToSign(
        { ...unsigned, properties: { signature: 'StandardWebhooks', secret: '********' } },
        signing,
      ),
    ).toBe(false);
    expect(comesToSign(unsigned, { ...signing, properties: { signature: 'None' } })).toBe(false);
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newWebhookSecret()).not.toBe(secret);
  });
});
