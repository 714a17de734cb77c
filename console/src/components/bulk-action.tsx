/**
 * A bulk rerun or cancel of the explorer's selection: a preview first (how many, which, on which
 * revision, what is skipped and why), then "Yes" acts and each run's result is shown. Both are
 * the API's own answers (`POST /executions/rerun|cancel`, `preview: true` first); a project limit
 * part-way shows what was done, and the runs left can be sent again.
 */
import {
  TrellisApiError,
  type BulkSelection,
  type components,
  type TrellisClient,
} from '@trellis/sdk';
import { useEffect, useState } from 'preact/hooks';
import { messagesOf, Problems, shortId } from './common.js';
import { StatusBadge } from './status.js';
import { Link } from '../router.js';

type Schemas = components['schemas'];
type Answer = Schemas['BulkRerun'] | Schemas['BulkCancel'];
type Item = Schemas['BulkExecutionResult'] & Partial<Schemas['BulkRerunResult']>;
export type BulkKind = 'rerun' | 'cancel';

interface BulkActionProps {
  client: TrellisClient;
  kind: BulkKind;
  selection: BulkSelection;
  /** How the selection reads: `3 selected runs`, `every run matching the filter`. */
  described: string;
  onClose: () => void;
  /** After the action: the list shows the runs as they are now. */
  onDone: () => void;
}

const runs = (count: number) => `${count} run${count === 1 ? '' : 's'}`;

export function BulkAction({
  client,
  kind,
  selection,
  described,
  onClose,
  onDone,
}: BulkActionProps) {
  const [revision, setRevision] = useState<'ran' | 'latest'>('ran');
  const [preview, setPreview] = useState<Answer | null>(null);
  const [result, setResult] = useState<Answer | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const verb = kind === 'rerun' ? 'Rerun' : 'Cancel';

  const send = (body: BulkSelection, dryRun: boolean): Promise<Answer> =>
    kind === 'rerun'
      ? client.POST('/executions/rerun', { body: { ...body, revision, preview: dryRun } })
      : client.POST('/executions/cancel', { body: { ...body, preview: dryRun } });

  useEffect(() => {
    let current = true;
    setPreview(null);
    setProblems([]);
    send(selection, true).then(
      (answer) => current && setPreview(answer),
      (error: unknown) => current && setProblems(messagesOf(error)),
    );
    return () => {
      current = false;
    };
  }, [JSON.stringify(selection), revision, kind]);

  const act = async (body: BulkSelection) => {
    setBusy(true);
    setProblems([]);
    try {
      setResult(await send(body, false));
    } catch (error) {
      // A project limit stopped it part-way: its answer still says what was done.
      const data =
        error instanceof TrellisApiError && error.status === 429
          ? (error.body as { data?: Answer | null }).data
          : undefined;
      if (data) setResult(data);
      setProblems(messagesOf(error));
    } finally {
      setBusy(false);
      onDone();
    }
  };
  const left = (result?.executions ?? []).filter((item) => item.outcome === 'NotDone');

  return (
    <section class="bulk-action" aria-labelledby="bulk-action-title">
      <h2 id="bulk-action-title">
        {verb} {described}
      </h2>
      {kind === 'rerun' && !result && (
        <fieldset class="field revision">
          <legend>Run on</legend>
          <label class="check">
            <input
              type="radio"
              name="bulk-revision"
              checked={revision === 'ran'}
              onChange={() => setRevision('ran')}
            />
            The revision each ran (reuses what completed)
          </label>
          <label class="check">
            <input
              type="radio"
              name="bulk-revision"
              checked={revision === 'latest'}
              onChange={() => setRevision('latest')}
            />
            The latest revision (every task runs again)
          </label>
        </fieldset>
      )}
      <Problems messages={problems} />
      {result ? (
        <>
          <p role="status" class="bulk-summary">
            {summary(result, kind)}
          </p>
          <BulkTable answer={result} kind={kind} />
          <p class="actions">
            {left.length > 0 && (
              <button
                type="button"
                class="primary"
                disabled={busy}
                onClick={() => void act({ ids: left.map((item) => item.executionId) })}
              >
                {verb} the {runs(left.length)} not done
              </button>
            )}
            <button type="button" onClick={onClose}>
              Close
            </button>
          </p>
        </>
      ) : preview ? (
        <>
          <p role="status" class="bulk-summary">
            {summary(preview, kind)}
          </p>
          <BulkTable answer={preview} kind={kind} />
          <p class="actions">
            {preview.counts.acted > 0 && (
              <button
                type="button"
                class={kind === 'cancel' ? 'danger' : 'primary'}
                disabled={busy}
                onClick={() => void act(selection)}
              >
                Yes, {kind} {runs(preview.counts.acted)}
              </button>
            )}
            <button type="button" onClick={onClose}>
              {preview.counts.acted === 0
                ? 'Close'
                : kind === 'cancel'
                  ? 'Keep them running'
                  : 'Not now'}
            </button>
          </p>
        </>
      ) : (
        problems.length === 0 && (
          <p class="muted" role="status">
            Looking at the selected runs…
          </p>
        )
      )}
    </section>
  );
}

function summary(answer: Answer, kind: BulkKind): string {
  const { acted, skipped, notDone } = answer.counts;
  const done = kind === 'rerun' ? 'rerun' : 'canceled';
  const head = answer.preview
    ? `${runs(acted)} would be ${done}`
    : `${runs(acted)} ${acted === 1 ? 'was' : 'were'} ${done}`;
  const tail = [
    ...(skipped > 0 ? [`${skipped} skipped`] : []),
    ...(notDone > 0 ? [`${notDone} not done (a project limit): send them again`] : []),
  ];
  return `${head}${tail.length > 0 ? `; ${tail.join('; ')}` : ''}.`;
}

/** What became of a run, in the action's words. */
function outcomeText(outcome: Item['outcome'], kind: BulkKind): string {
  const done = kind === 'rerun' ? 'rerun' : 'canceled';
  switch (outcome) {
    case 'WouldAct':
      return `Would be ${done}`;
    case 'Done':
      return kind === 'rerun' ? 'Rerun' : 'Cancel requested';
    case 'Skipped':
      return 'Skipped';
    case 'NotDone':
      return 'Not done';
  }
}

function BulkTable({ answer, kind }: { answer: Answer; kind: BulkKind }) {
  const items = answer.executions as Item[];
  return (
    <div class="table-scroll">
      <table class="bulk-results">
        <caption class="visually-hidden">Each selected run</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Outcome</th>
            {kind === 'rerun' && <th scope="col">Revision</th>}
            <th scope="col">{kind === 'rerun' ? 'New run, or why not' : 'Why not'}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.executionId} data-bulk-execution={item.executionId}>
              <td>
                {item.workflowId ? (
                  <Link to={`/workflows/${item.workflowId}/runs/${item.executionId}`}>
                    Run {shortId(item.executionId)}
                  </Link>
                ) : (
                  `Run ${shortId(item.executionId)}`
                )}
              </td>
              <td class="wrap">{item.workflowName ?? '—'}</td>
              <td>{item.status ? <StatusBadge status={item.status} /> : '—'}</td>
              <td>{outcomeText(item.outcome, kind)}</td>
              {kind === 'rerun' && <td class="nowrap">{revisionText(item)}</td>}
              <td class="wrap">
                {item.newExecutionId && item.workflowId ? (
                  <Link to={`/workflows/${item.workflowId}/runs/${item.newExecutionId}`}>
                    Run {shortId(item.newExecutionId)}
                  </Link>
                ) : (
                  (item.reason?.message ?? '')
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function revisionText(item: Item): string {
  if (item.rerunRevision === null || item.rerunRevision === undefined) return '—';
  const ran = item.ranRevision ?? '?';
  return ran === item.rerunRevision ? `${ran}` : `${ran} → ${item.rerunRevision}`;
}
