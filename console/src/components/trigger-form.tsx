/**
 * The form that creates or edits a trigger: its type and status; a TimeBased trigger's cron with
 * a live preview of its next firings, its time zone and schedule policies, and the inputs of its
 * runs; a Webhook trigger's signature. The body it sends is `TriggerCreate`, from the contract.
 */
import { useState } from 'preact/hooks';
import { formatDateTime } from '../format.js';
import {
  overlaps,
  previewFirings,
  propertiesOf,
  type TriggerCreate,
  type TriggerDraft,
  type TriggerType,
} from '../triggers.js';
import { messagesOf, Problems } from './common.js';

const previewCount = 5;

interface TriggerFormProps {
  /** Unique on the page: the fields' ids start with it. */
  id: string;
  initial: TriggerDraft;
  submitLabel: string;
  onSubmit: (body: TriggerCreate) => Promise<void>;
  onCancel?: () => void;
}

const typeLabels: Record<TriggerType, string> = {
  TimeBased: 'On a schedule (cron)',
  Webhook: 'By a webhook',
  Manual: 'Manual',
};

export function TriggerForm({ id, initial, submitLabel, onSubmit, onCancel }: TriggerFormProps) {
  const [draft, setDraft] = useState<TriggerDraft>(initial);
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const field = (name: 'cron' | 'timezone' | 'catchupWindow' | 'jitter') => ({
    id: `${id}-${name}`,
    value: draft[name],
    onInput: (event: { currentTarget: HTMLInputElement }) =>
      setDraft({ ...draft, [name]: event.currentTarget.value }),
  });
  const submit = async (event: Event) => {
    event.preventDefault();
    const built = propertiesOf(draft);
    if (!built.ok) {
      setProblems([built.problem]);
      return;
    }
    setBusy(true);
    setProblems([]);
    try {
      await onSubmit({
        type: draft.type,
        status: draft.status,
        properties: built.properties,
      });
    } catch (error) {
      setProblems(messagesOf(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="trigger-form" onSubmit={(event) => void submit(event)}>
      <fieldset class="choice">
        <legend>Fires</legend>
        {(Object.keys(typeLabels) as TriggerType[]).map((type) => (
          <label key={type}>
            <input
              type="radio"
              name={`${id}-type`}
              value={type}
              checked={draft.type === type}
              onChange={() => setDraft({ ...draft, type })}
            />
            {typeLabels[type]}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input
          type="checkbox"
          checked={draft.status === 'Active'}
          onChange={(event) =>
            setDraft({ ...draft, status: event.currentTarget.checked ? 'Active' : 'DeActive' })
          }
        />
        Active (a paused trigger does not fire)
      </label>
      {draft.type === 'TimeBased' && (
        <>
          <div class="field">
            <label for={`${id}-cron`}>Cron expression</label>
            <input
              {...field('cron')}
              autocomplete="off"
              spellcheck={false}
              aria-describedby={`${id}-cron-hint ${id}-preview`}
              required
            />
            <p class="hint" id={`${id}-cron-hint`}>
              5 fields: minute hour day-of-month month day-of-week, e.g. <code>*/15 * * * *</code>
            </p>
          </div>
          <div class="field">
            <label for={`${id}-timezone`}>Time zone</label>
            <input {...field('timezone')} placeholder="UTC" autocomplete="off" />
            <p class="hint">An IANA name such as Europe/Paris; UTC when empty.</p>
          </div>
          <CronPreview id={`${id}-preview`} cron={draft.cron} timezone={draft.timezone} />
          <fieldset class="policies">
            <legend>Schedule policies</legend>
            <div class="field">
              <label for={`${id}-overlap`}>While an earlier run still runs</label>
              <select
                id={`${id}-overlap`}
                value={draft.overlap}
                onChange={(event) =>
                  setDraft({
                    ...draft,
                    overlap: event.currentTarget.value as TriggerDraft['overlap'],
                  })
                }
              >
                <option value="">Skip the firing (default)</option>
                {overlaps
                  .filter(({ value }) => value !== 'Skip')
                  .map(({ value, label }) => (
                    <option key={value} value={value}>
                      {label}
                    </option>
                  ))}
              </select>
            </div>
            <div class="field">
              <label for={`${id}-catchupWindow`}>Catch-up window</label>
              <input {...field('catchupWindow')} placeholder="1m" autocomplete="off" />
              <p class="hint">
                How late a firing missed while Temporal was down may still run: 10s to 366d.
              </p>
            </div>
            <div class="field">
              <label for={`${id}-jitter`}>Jitter</label>
              <input {...field('jitter')} placeholder="none" autocomplete="off" />
              <p class="hint">A random delay of up to this much per firing, e.g. 30s or 5m.</p>
            </div>
          </fieldset>
          <div class="field">
            <label for={`${id}-inputs`}>Inputs of each run (JSON object)</label>
            <textarea
              id={`${id}-inputs`}
              rows={3}
              spellcheck={false}
              value={draft.inputs}
              placeholder='{"region": "eu"}'
              onInput={(event) => setDraft({ ...draft, inputs: event.currentTarget.value })}
            />
          </div>
        </>
      )}
      {draft.type === 'Webhook' && (
        <div class="field">
          <label for={`${id}-signature`}>Signature</label>
          <select
            id={`${id}-signature`}
            value={draft.signature}
            onChange={(event) =>
              setDraft({
                ...draft,
                signature: event.currentTarget.value as TriggerDraft['signature'],
              })
            }
          >
            <option value="StandardWebhooks">
              Standard Webhooks (signed with a secret Trellis generates)
            </option>
            <option value="None">None (anyone who knows the address may fire it)</option>
          </select>
        </div>
      )}
      <Problems messages={problems} title="The trigger was not saved:" />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/** The next firings of the cron as typed, computed here: the form is not saved yet. */
function CronPreview({ id, cron, timezone }: { id: string; cron: string; timezone: string }) {
  const preview = previewFirings(cron, timezone, previewCount);
  return (
    <div class="cron-preview" id={id} aria-live="polite">
      <p class="field-type">Next firings, as typed (in your time zone)</p>
      {preview.ok ? (
        <ol class="firings">
          {preview.times.map((time) => (
            <li key={time.toISOString()}>
              <time dateTime={time.toISOString()}>{formatDateTime(time.toISOString())}</time>
            </li>
          ))}
        </ol>
      ) : (
        <p class="field-problem">{preview.problem}</p>
      )}
    </div>
  );
}
