/**
 * Two revisions of a workflow side by side (`/workflows/<id>/revisions/<a>...<b>`), chosen from
 * its list of revisions, their changed lines marked and counted; stacked on a phone.
 */
import type { TrellisClient } from '@trellis/sdk';
import { Loading, useLoad } from '../components/common.js';
import { formatDateTime } from '../format.js';
import { Link, navigate } from '../router.js';

/** The newest revisions offered in the choice; an older one is reached by its address. */
const listed = 1000;

/** The console path comparing revision `a` (before) with `b` (after). */
export const revisionsPath = (workflowId: string, a: number, b: number) =>
  `/workflows/${workflowId}/revisions/${a}...${b}`;

/** The two revision numbers of a range `<a>...<b>`, or null when it is not one. */
export function revisionRange(range: string): [number, number] | null {
  const found = /^([1-9]\d{0,8})\.\.\.([1-9]\d{0,8})$/.exec(range);
  return found ? [Number(found[1]), Number(found[2])] : null;
}

interface RevisionsPageProps {
  client: TrellisClient;
  workflowId: string;
  /** The range in the address (`3...5`); undefined: the current revision and the one before. */
  range: string | undefined;
}

export function RevisionsPage({ client, workflowId, range }: RevisionsPageProps) {
  const loaded = useLoad(async () => {
    const [workflow, revisions] = await Promise.all([
      client.GET('/workflows/{workflowId}', { params: { path: { workflowId } } }),
      client.GET('/workflows/{workflowId}/revisions', {
        params: { path: { workflowId }, query: { pageSize: listed } },
      }),
    ]);
    return { workflow, revisions };
  }, [workflowId]);
  return (
    <main id="main">
      <Loading loaded={loaded}>
        {({ workflow, revisions }) => {
          const chosen =
            range === undefined
              ? ([Math.max(1, workflow.revision - 1), workflow.revision] as [number, number])
              : revisionRange(range);
          return (
            <>
              <div class="page-head">
                <div>
                  <p class="crumbs">
                    <Link to="/workflows">Workflows</Link> /{' '}
                    <Link to={`/workflows/${workflowId}`}>{workflow.name}</Link> /
                  </p>
                  <h1>Revisions of {workflow.name}</h1>
                  <p class="lead">
                    Two revisions of the definition side by side, the lines that changed marked.
                  </p>
                </div>
              </div>
              {chosen === null ? (
                <div class="problems" role="alert">
                  <p>
                    “{range}” is not a pair of revisions: the address ends with two revision
                    numbers, as in <code>{revisionsPath(workflowId, 1, workflow.revision)}</code>.
                  </p>
                </div>
              ) : (
                <Comparison
                  client={client}
                  workflowId={workflowId}
                  numbers={[...new Set([...revisions.map((item) => item.revision), ...chosen])]}
                  current={workflow.revision}
                  a={chosen[0]}
                  b={chosen[1]}
                />
              )}
            </>
          );
        }}
      </Loading>
    </main>
  );
}

interface ComparisonProps {
  client: TrellisClient;
  workflowId: string;
  /** The revisions that can be chosen. */
  numbers: number[];
  current: number;
  a: number;
  b: number;
}

function Comparison({ client, workflowId, numbers, current, a, b }: ComparisonProps) {
  const shown = useLoad(
    () =>
      Promise.all([
        client.GET('/workflows/{workflowId}/revisions/{revision}', {
          params: { path: { workflowId, revision: a } },
        }),
        client.GET('/workflows/{workflowId}/revisions/{revision}', {
          params: { path: { workflowId, revision: b } },
        }),
        // CodeMirror's merge view: loaded with the page that shows one.
        import('../components/code-editor.js'),
      ]),
    [workflowId, a, b],
  );
  const choose = (before: number, after: number) =>
    navigate(revisionsPath(workflowId, before, after), { replace: true });
  const name = (revision: number) =>
    revision === current ? `Revision ${revision} (current)` : `Revision ${revision}`;
  const options = [...numbers].sort((x, y) => y - x);
  return (
    <>
      <form
        class="filters revision-choice"
        aria-label="Revisions to compare"
        onSubmit={(event) => event.preventDefault()}
      >
        <RevisionSelect
          id="revision-before"
          label="Before"
          value={a}
          options={options}
          name={name}
          onChoose={(revision) => choose(revision, b)}
        />
        <RevisionSelect
          id="revision-after"
          label="After"
          value={b}
          options={options}
          name={name}
          onChoose={(revision) => choose(a, revision)}
        />
        <button type="button" onClick={() => choose(b, a)}>
          Swap
        </button>
      </form>
      <Loading loaded={shown}>
        {([before, after, { TextComparison, changesBetween }]) => {
          // The revisions chosen before, while the new ones load: not shown under the new names.
          if (before.revision !== a || after.revision !== b) {
            return (
              <p class="muted" role="status">
                Loading…
              </p>
            );
          }
          const [beforeText, afterText] = [readable(before.workflow), readable(after.workflow)];
          const changes = changesBetween(beforeText, afterText);
          return (
            <section aria-labelledby="comparison-heading">
              <h2 id="comparison-heading">
                {name(a)} → {name(b)}
              </h2>
              <dl class="facts revision-facts">
                <dt>{name(a)}</dt>
                <dd>
                  {before.name}, stored {formatDateTime(before.createdAt)}
                </dd>
                <dt>{name(b)}</dt>
                <dd>
                  {after.name}, stored {formatDateTime(after.createdAt)}
                </dd>
              </dl>
              <p class="change-count" role="status">
                {changes.places === 0
                  ? 'The two definitions are the same.'
                  : `${changes.places === 1 ? '1 place changed' : `${changes.places} places changed`}: ` +
                    `${lines(changes.removed)} of revision ${a}, ${lines(changes.added)} of revision ${b}.`}
              </p>
              <TextComparison
                before={beforeText}
                after={afterText}
                beforeLabel={name(a)}
                afterLabel={name(b)}
                stepper={changes.places > 0}
              />
            </section>
          );
        }}
      </Loading>
    </>
  );
}

/** A definition indented two spaces a level, so that a change is a change of lines. */
function readable(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

const lines = (count: number) => (count === 1 ? '1 line' : `${count} lines`);

/** One side of the comparison: the revisions newest first, named as the page names them. */
function RevisionSelect({
  id,
  label,
  value,
  options,
  name,
  onChoose,
}: {
  id: string;
  label: string;
  value: number;
  options: number[];
  name: (revision: number) => string;
  onChoose: (revision: number) => void;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        value={value}
        onChange={(event) => onChoose(Number(event.currentTarget.value))}
      >
        {options.map((revision) => (
          <option key={revision} value={revision}>
            {name(revision)}
          </option>
        ))}
      </select>
    </div>
  );
}
