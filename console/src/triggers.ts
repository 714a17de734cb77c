/**
 * A trigger as the console's form edits it: the draft a form holds, the properties it sends, the
 * firings a cron expression makes (computed here, with croner, for a form not yet saved), and a
 * trigger in words.
 */
import type { components } from '@trellis/sdk';
import { Cron } from 'croner';

export type Trigger = components['schemas']['Trigger'];
export type TriggerType = components['schemas']['TriggerType'];
export type TriggerStatus = components['schemas']['TriggerStatus'];
export type ScheduleOverlap = components['schemas']['ScheduleOverlap'];
export type TriggerCreate = components['schemas']['TriggerCreate'];

export const overlaps: { value: ScheduleOverlap; label: string }[] = [
  { value: 'Skip', label: 'Skip the firing (default)' },
  { value: 'BufferOne', label: 'Run it after the running one (at most one waits)' },
  { value: 'BufferAll', label: 'Run every firing, one after another' },
  { value: 'CancelOther', label: 'Cancel the running one, then run' },
  { value: 'TerminateOther', label: 'Terminate the running one, then run' },
  { value: 'AllowAll', label: 'Run at once: runs may overlap' },
];

/** What the form holds: text fields as typed. */
export interface TriggerDraft {
  type: TriggerType;
  status: TriggerStatus;
  cron: string;
  timezone: string;
  /** '' for the default (`Skip`). */
  overlap: ScheduleOverlap | '';
  catchupWindow: string;
  jitter: string;
  /** The runs' inputs as JSON text; '' for none. */
  inputs: string;
  signature: 'StandardWebhooks' | 'None';
  /** The trigger's other properties, kept as they are. */
  others: Record<string, unknown>;
}

export const newDraft: TriggerDraft = {
  type: 'TimeBased',
  status: 'Active',
  cron: '0 6 * * *',
  timezone: '',
  overlap: '',
  catchupWindow: '',
  jitter: '',
  inputs: '',
  signature: 'StandardWebhooks',
  others: {},
};

const known = [
  'cron',
  'timezone',
  'overlap',
  'catchupwindow',
  'jitter',
  'inputs',
  'signature',
  'secret',
];

/** A property read as the API reads it: its key in any case. */
function property(properties: Record<string, unknown>, key: string): unknown {
  const found = Object.keys(properties).find((name) => name.toLowerCase() === key.toLowerCase());
  return found === undefined ? undefined : properties[found];
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** The draft of a stored trigger. */
export function draftOf(trigger: Trigger): TriggerDraft {
  const { properties } = trigger;
  const inputs = property(properties, 'inputs');
  return {
    type: trigger.type,
    status: trigger.status,
    cron: text(property(properties, 'cron')),
    timezone: text(property(properties, 'timezone')),
    overlap: text(property(properties, 'overlap')) as ScheduleOverlap | '',
    catchupWindow: text(property(properties, 'catchupWindow')),
    jitter: text(property(properties, 'jitter')),
    inputs: inputs === undefined ? '' : JSON.stringify(inputs, null, 2),
    signature: property(properties, 'signature') === 'None' ? 'None' : 'StandardWebhooks',
    others: Object.fromEntries(
      Object.entries(properties).filter(([key]) => !known.includes(key.toLowerCase())),
    ),
  };
}

/**
 * The properties a draft sends, or the problem of its inputs' JSON. A stored secret is kept by
 * leaving it out (the API keeps it when absent).
 */
export function propertiesOf(
  draft: TriggerDraft,
): { ok: true; properties: Record<string, unknown> } | { ok: false; problem: string } {
  const properties: Record<string, unknown> = { ...draft.others };
  if (draft.type === 'TimeBased') {
    properties.cron = draft.cron.trim();
    if (draft.timezone.trim()) properties.timezone = draft.timezone.trim();
    if (draft.overlap) properties.overlap = draft.overlap;
    if (draft.catchupWindow.trim()) properties.catchupWindow = draft.catchupWindow.trim();
    if (draft.jitter.trim()) properties.jitter = draft.jitter.trim();
    if (draft.inputs.trim()) {
      let inputs: unknown;
      try {
        inputs = JSON.parse(draft.inputs);
      } catch (error) {
        return { ok: false, problem: `Inputs are not JSON: ${(error as Error).message}` };
      }
      if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) {
        return { ok: false, problem: 'Inputs must be a JSON object: {"name": value, ...}' };
      }
      properties.inputs = inputs;
    }
  } else if (draft.type === 'Webhook') {
    properties.signature = draft.signature;
  }
  return { ok: true, properties };
}

/**
 * The next `count` firings of a cron expression (5 fields) in a time zone (UTC when ''), after
 * `from`; or why it cannot fire. The API's `upcoming` gives a saved trigger's, as its Temporal
 * schedule computes them (jitter included); this is the preview of a form not yet saved.
 */
export function previewFirings(
  cron: string,
  timezone: string,
  count: number,
  from = new Date(),
): { ok: true; times: Date[] } | { ok: false; problem: string } {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 || !fields[0]) {
    return {
      ok: false,
      problem: 'A cron expression has 5 fields: minute hour day-of-month month day-of-week.',
    };
  }
  const zone = timezone.trim() || 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    return { ok: false, problem: `"${zone}" is not an IANA time zone (e.g. Europe/Berlin).` };
  }
  try {
    const schedule = new Cron(cron.trim(), { timezone: zone, paused: true });
    return { ok: true, times: schedule.nextRuns(count, from) };
  } catch (error) {
    return { ok: false, problem: (error as Error).message.replace(/^CronPattern: /, '') };
  }
}

/** What a trigger does, in a few words: its cron and zone, its signature. */
export function triggerSummary(trigger: Pick<Trigger, 'type' | 'properties'>): string {
  const { properties } = trigger;
  if (trigger.type === 'TimeBased') {
    const zone = text(property(properties, 'timezone'));
    return `${text(property(properties, 'cron'))}${zone ? ` (${zone})` : ' (UTC)'}`;
  }
  if (trigger.type === 'Webhook') {
    return property(properties, 'signature') === 'None' ? 'unsigned' : 'signed (Standard Webhooks)';
  }
  return 'started by a person or the API';
}

/**
 * A new Standard Webhooks secret (`whsec_` and the base64 of 32 random bytes), for an update that
 * makes a trigger sign: the API generates one only when a trigger is created.
 */
export function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** Whether saving `body` over `stored` makes a trigger sign that has no secret yet. */
export function comesToSign(stored: Trigger, body: TriggerCreate): boolean {
  return (
    body.type === 'Webhook' &&
    body.properties.signature === 'StandardWebhooks' &&
    typeof stored.properties.secret !== 'string'
  );
}
