/**
 * One run, live: the workflow's DAG coloured by each task's status as the event stream
 * (`watchExecution`) reports it, with the tasks' attempts, times and outputs, the merged log
 * timeline, the approvals it waits for, cancel and rerun, and a link to its Temporal workflow.
 */
import { TrellisApiError } from '@trellis/sdk';
import type { ExecutionDetail, ExecutionEvent, TrellisClient } from '@trellis/sdk';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Loading, messagesOf, Problems, shortId, useLoad } from '../components/common.js';
import { DagView } from '../components/dag-view.js';
import { DecisionForm, decideAsUser } from '../components/decision.js';
import { DryRunPlan } from '../components/dry-run-plan.js';
import { StatusBadge } from '../components/status.js';
import { parseDefinitionText, type GraphDefinition } from '../definition.js';
import { dryRunPlan } from '../dry-run-plan.js';
import { durationBetween, formatDateTime } from '../format.js';
import { Link, navigate } from '../router.js';
import {
  emptyRun,
  finalExecutionStatuses,
  foldEvents,
  withEntries,
  type LogEntry,
  type RunState,
  type TaskState,
} from '../run-state.js';

interface RunPageProps {
  client: TrellisClient;
  workflowId: string;
  executionId: string;
  /** The Temporal UI's page of workflows of the namespace (ends with `/`); null: no link. */
  temporalWorkflows: string | null;
}

type TaskRow = Awaited<ReturnType<typeof loadTasks>>[number];

const loadTasks = (client: TrellisClient, workflowId: string, executionId: string) =>
  client.GET('/workflows/{workflowId}/executions/{executionId}/tasks', {
    params: { path: { workflowId, executionId } },
  });

export function RunPage(props: RunPageProps) {
  const { client, workflowId, executionId } = props;
  const loaded = useLoad(async () => {
    const path = { workflowId, executionId };
    const [detail, tasks, workflow, logs] = await Promise.all([
      client.GET('/workflows/{workflowId}/executions/{executionId}', { params: { path } }),
      loadTasks(client, workflowId, executionId),
      // A new workflow's test run belongs to a draft that no workflow operation finds.
      client
        .GET('/workflows/{workflowId}', { params: { path: { workflowId } } })
        .catch((error: unknown) => {
          if (error instanceof TrellisApiError && error.status === 404) return null;
          throw error;
        }),
      client.GET('/workflows/{workflowId}/executions/{executionId}/logs', {
        params: { path, query: { includeTasks: true, pageSize: 1000 } },
      }),
    ]);
    const workflowName =
      workflow?.name ?? parseDefinitionText(detail.workflow)?.name ?? 'A workflow not stored';
    return { detail, tasks, workflowName, stored: workflow !== null, logs };
  }, [workflowId, executionId]);
  return (
    <main id="main">
      <Loading loaded={loaded}>{(data) => <Run key={executionId} {...props} {...data} />}</Loading>
    </main>
  );
}

interface RunProps extends RunPageProps {
  detail: ExecutionDetail;
  tasks: TaskRow[];
  workflowName: string;
  /** False for a new workflow's test run: its workflow is a draft, with no page. */
  stored: boolean;
  logs: LogEntry[];
}

/** The state the page shows before the stream's first events: what the REST calls said. */
function initialState(detail: ExecutionDetail, tasks: TaskRow[], logs: LogEntry[]): RunState {
  const byName: Record<string, TaskState> = {};
  for (const task of tasks) {
    byName[task.name] = {
      taskExecutionId: task.id,
      status: task.status,
      message: task.message,
      attempts: 0,
      interruptedAttempts: 0,
      attemptOpen: false,
      startedAt: task.startTime,
      endedAt: task.endTime,
    };
  }
  return { ...emptyRun, status: detail.status, tasks: byName, logs: withEntries([], logs) };
}

function Run({
  client,
  workflowId,
  executionId,
  temporalWorkflows,
  detail,
  tasks,
  workflowName,
  stored,
  logs,
}: RunProps) {
  const definition = useMemo(() => parseDefinitionText(detail.workflow), [detail.workflow]);
  const [run, setRun] = useState(() => initialState(detail, tasks, logs));
  const [streamProblem, setStreamProblem] = useState<string | null>(null);
  const [connection, setConnection] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const [actionProblems, setActionProblems] = useState<string[]>([]);

  // The run as it happens: every event from the first (the run's past, then live), folded in a
  // few at a time. The stream ends by itself after the run's final status.
  useEffect(() => {
    const stop = new AbortController();
    let pending: ExecutionEvent[] = [];
    let flush: ReturnType<typeof setTimeout> | null = null;
    const apply = () => {
      flush = null;
      const events = pending;
      pending = [];
      setRun((before) => foldEvents(before, events));
    };
    setStreamProblem(null);
    void (async () => {
      try {
        for await (const event of client.watchExecution(workflowId, executionId, {
          signal: stop.signal,
        })) {
          pending.push(event);
          flush ??= setTimeout(apply, 30);
        }
      } catch (error) {
        if (!stop.signal.aborted) setStreamProblem(messagesOf(error).join(' '));
      }
    })();
    return () => {
      stop.abort();
      if (flush !== null) clearTimeout(flush);
    };
  }, [client, workflowId, executionId, connection]);

  const finished = run.status !== null && finalExecutionStatuses.includes(run.status);
  // What changes only at a few moments is read again at those moments: the approvals when an
  // approval event arrives, the detail (outputs, end time) when the run ends.
  const approvals = useLoad(
    () =>
      client.GET('/workflows/{workflowId}/executions/{executionId}/approvals', {
        params: { path: { workflowId, executionId } },
      }),
    [executionId, run.approvalChanges],
  );
  const current = useLoad(
    () =>
      finished
        ? client.GET('/workflows/{workflowId}/executions/{executionId}', {
            params: { path: { workflowId, executionId } },
          })
        : Promise.resolve(detail),
    [executionId, finished],
  );
  const shown = current.data ?? detail;
  // The stream says when each change was recorded; once the run is over, the tasks' own start
  // and end times are read (the table and a task's details then agree to the millisecond).
  const ended = useLoad(
    () => (finished ? loadTasks(client, workflowId, executionId) : Promise.resolve([])),
    [executionId, finished],
  );
  const times = useMemo(
    () =>
      new Map(
        (ended.data ?? []).map((task) => [
          task.name,
          { startedAt: task.startTime, endedAt: task.endTime },
        ]),
      ),
    [ended.data],
  );
  const statuses = useMemo(
    () => Object.fromEntries(Object.entries(run.tasks).map(([name, task]) => [name, task.status])),
    [run.tasks],
  );
  const namesById = useMemo(
    () => new Map(Object.entries(run.tasks).map(([name, task]) => [task.taskExecutionId, name])),
    [run.tasks],
  );
  const pending = (approvals.data ?? []).filter((approval) => approval.status === 'Pending');
  // A dry run's plan is on its tasks' rows, written with each task's outcome: read again when
  // a task's status changes.
  const taskChanges = Object.values(run.tasks)
    .map((task) => `${task.taskExecutionId}:${task.status}`)
    .join(',');
  const planned = useLoad(
    () => (shown.dryRun ? loadTasks(client, workflowId, executionId) : Promise.resolve(tasks)),
    [executionId, shown.dryRun, taskChanges],
  );
  const plan = useMemo(
    () =>
      shown.dryRun
        ? dryRunPlan(
            definition?.tasks.map((task) => task.name) ?? Object.keys(run.tasks),
            run.tasks,
            planned.data ?? tasks,
          )
        : null,
    [shown.dryRun, definition, run.tasks, planned.data, tasks],
  );

  const cancel = async () => {
    setActionProblems([]);
    try {
      await client.POST('/workflows/{workflowId}/executions/{executionId}/cancel', {
        params: { path: { workflowId, executionId } },
      });
    } catch (error) {
      setActionProblems(messagesOf(error));
    }
  };
  const rerun = async (fromTask: string | null) => {
    setActionProblems([]);
    try {
      const started = await client.POST('/workflows/{workflowId}/executions/{executionId}/rerun', {
        params: { path: { workflowId, executionId } },
        body: fromTask === null ? {} : { fromTask },
      });
      navigate(`/workflows/${workflowId}/runs/${started.executionId}`);
    } catch (error) {
      setActionProblems(messagesOf(error));
    }
  };

  return (
    <>
      <div class="page-head">
        <div>
          <p class="crumbs">
            <Link to="/workflows">Workflows</Link> /{' '}
            {stored ? (
              <Link to={`/workflows/${workflowId}`}>{workflowName}</Link>
            ) : (
              <span title="The run of a test case of a workflow not stored yet">
                {workflowName} (not stored: a test run)
              </span>
            )}{' '}
            /
          </p>
          <h1>
            Run <code>{shortId(executionId)}</code> <StatusBadge status={run.status} />
            {shown.dryRun && (
              <>
                {' '}
                <span
                  class="badge dry-run"
                  title="Only pure tasks ran; every other task returned an output and performed nothing"
                >
                  Dry run
                </span>
              </>
            )}
          </h1>
          {run.message && <p class="lead">{run.message}</p>}
          <p class="muted">
            {shown.revision !== null && `Revision ${shown.revision} · `}
            Started {formatDateTime(shown.executionStart)}
            {shown.executionEnd &&
              `, ended ${formatDateTime(shown.executionEnd)} (${durationBetween(shown.executionStart, shown.executionEnd)})`}
            {shown.rerunOf && (
              <>
                {' '}
                · reruns{' '}
                <Link to={`/workflows/${workflowId}/runs/${shown.rerunOf}`}>
                  {shortId(shown.rerunOf)}
                </Link>
              </>
            )}
          </p>
        </div>
        <RunActions
          finished={finished}
          temporalLink={
            temporalWorkflows &&
            `${temporalWorkflows}${encodeURIComponent(`trellis-execution-${executionId}`)}`
          }
          onCancel={cancel}
          onRerun={() => void rerun(null)}
        />
      </div>
      <Problems messages={actionProblems} />
      {streamProblem && (
        <div class="problems" role="alert">
          <p>Live updates stopped: {streamProblem}</p>
          <button type="button" onClick={() => setConnection((value) => value + 1)}>
            Reconnect
          </button>
        </div>
      )}
      {pending.length > 0 && (
        <section class="waiting" aria-labelledby="waiting-heading">
          <h2 id="waiting-heading">Waiting for a decision</h2>
          {pending.map((approval) => (
            <div class="approval" key={approval.id}>
              <p>
                <strong>{approval.taskName}</strong>
                {approval.comment && <> — {approval.comment}</>}
              </p>
              <DecisionForm
                approval={approval}
                send={decideAsUser(client, approval)}
                onDecided={() => approvals.reload()}
              />
            </div>
          ))}
        </section>
      )}
      <section aria-labelledby="graph-heading">
        <h2 id="graph-heading">Graph</h2>
        {definition ? (
          <DagView
            definition={definition}
            label={`Tasks of run ${shortId(executionId)} with their status; choose one for its details`}
            statuses={statuses}
            selected={selected}
            onSelect={(name) => setSelected((before) => (before === name ? null : name))}
          />
        ) : (
          <p class="muted">The run's definition cannot be read as JSON.</p>
        )}
      </section>
      {selected && run.tasks[selected] && (
        <TaskPanel
          client={client}
          workflowId={workflowId}
          executionId={executionId}
          name={selected}
          task={run.tasks[selected]}
          finished={finished}
          onRerun={() => void rerun(selected)}
          onClose={() => setSelected(null)}
        />
      )}
      {plan && <DryRunPlan workflowId={workflowId} plan={plan} finished={finished} />}
      <section aria-labelledby="tasks-heading">
        <h2 id="tasks-heading">Tasks</h2>
        <TaskTable definition={definition} run={run} times={times} onSelect={setSelected} />
      </section>
      <div class="columns">
        <section aria-labelledby="inputs-heading">
          <h2 id="inputs-heading">Inputs</h2>
          <pre class="json" tabIndex={0}>
            {JSON.stringify(shown.inputs, null, 2)}
          </pre>
        </section>
        <section aria-labelledby="outputs-heading">
          <h2 id="outputs-heading">Outputs</h2>
          {shown.outputs === null ? (
            <p class="muted">When the run completes.</p>
          ) : (
            <pre class="json" tabIndex={0}>
              {JSON.stringify(shown.outputs, null, 2)}
            </pre>
          )}
        </section>
      </div>
      <section aria-labelledby="logs-heading">
        <h2 id="logs-heading">Log</h2>
        <Timeline logs={run.logs} namesById={namesById} />
      </section>
    </>
  );
}

interface RunActionsProps {
  finished: boolean;
  temporalLink: string | null;
  onCancel: () => Promise<void>;
  onRerun: () => void;
}

function RunActions({ finished, temporalLink, onCancel, onRerun }: RunActionsProps) {
  const [confirming, setConfirming] = useState(false);
  return (
    <div class="actions">
      {!finished &&
        (confirming ? (
          <>
            <button
              type="button"
              class="danger"
              onClick={() => void onCancel().then(() => setConfirming(false))}
            >
              Yes, cancel the run
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep it running
            </button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirming(true)}>
            Cancel run
          </button>
        ))}
      {finished && (
        <button type="button" onClick={onRerun}>
          Rerun
        </button>
      )}
      {temporalLink && (
        <a class="button" href={temporalLink} target="_blank" rel="noopener noreferrer">
          Open in Temporal UI
        </a>
      )}
    </div>
  );
}

interface TaskTableProps {
  definition: GraphDefinition | null;
  run: RunState;
  /** The recorded times of each task, once the run is over. */
  times: Map<string, { startedAt: string | null; endedAt: string | null }>;
  onSelect: (name: string) => void;
}

/** The time now, again every second while `ticking`: running durations go on from their start. */
function useNow(ticking: boolean): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [ticking]);
  return ticking ? Math.max(now, Date.now()) : now;
}

function TaskTable({ definition, run, times, onSelect }: TaskTableProps) {
  const names = definition?.tasks.map((task) => task.name) ?? Object.keys(run.tasks);
  const now = useNow(Object.values(run.tasks).some((task) => task.startedAt && !task.endedAt));
  return (
    <div class="table-scroll">
      <table class="tasks">
        <caption class="visually-hidden">Tasks of the run</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Started</th>
            <th scope="col">Took</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {names.map((name) => {
            const state = run.tasks[name];
            const task = state && { ...state, ...times.get(name) };
            return (
              <tr key={name} data-task-row={name}>
                <th scope="row">
                  <button type="button" class="link" onClick={() => onSelect(name)}>
                    {name}
                  </button>
                </th>
                <td>{task ? <StatusBadge status={task.status} /> : '—'}</td>
                <td>{task ? <Attempts task={task} /> : '—'}</td>
                <td>{formatDateTime(task?.startedAt)}</td>
                <td>{durationBetween(task?.startedAt, task?.endedAt, now)}</td>
                <td class="message">{task?.message || ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

interface TaskPanelProps {
  client: TrellisClient;
  workflowId: string;
  executionId: string;
  name: string;
  task: TaskState;
  finished: boolean;
  onRerun: () => void;
  onClose: () => void;
}

function TaskPanel({
  client,
  workflowId,
  executionId,
  name,
  task,
  finished,
  onRerun,
  onClose,
}: TaskPanelProps) {
  const detail = useLoad(
    () =>
      client.GET('/workflows/{workflowId}/executions/{executionId}/tasks/{taskExecutionId}', {
        params: { path: { workflowId, executionId, taskExecutionId: task.taskExecutionId } },
      }),
    [task.taskExecutionId, task.status],
  );
  return (
    <section class="panel" aria-labelledby="task-heading">
      <div class="page-head">
        <h2 id="task-heading">Task {name}</h2>
        <div class="actions">
          {finished && (
            <button type="button" onClick={onRerun}>
              Rerun from {name}
            </button>
          )}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={task.status} />
        </dd>
        <dt>Attempts</dt>
        <dd>
          <Attempts task={task} />
        </dd>
        <dt>Started</dt>
        <dd>{formatDateTime(detail.data?.startTime ?? task.startedAt)}</dd>
        <dt>Ended</dt>
        <dd>{formatDateTime(detail.data?.endTime ?? task.endedAt)}</dd>
        <dt>Took</dt>
        <dd>
          {durationBetween(
            detail.data?.startTime ?? task.startedAt,
            detail.data?.endTime ?? task.endedAt,
          )}
        </dd>
        {task.message && (
          <>
            <dt>Message</dt>
            <dd>{task.message}</dd>
          </>
        )}
      </dl>
      <h3>Output</h3>
      <Loading loaded={detail}>
        {(data) =>
          data.output === null ? (
            <p class="muted">None (yet).</p>
          ) : (
            <pre class="json" tabIndex={0}>
              {JSON.stringify(data.output, null, 2)}
            </pre>
          )
        }
      </Loading>
    </section>
  );
}

/** A task's attempts, and how many of them were interrupted (the log says when and why). */
function Attempts({ task }: { task: TaskState }) {
  if (!task.attempts) return <>—</>;
  if (!task.interruptedAttempts) return <>{task.attempts}</>;
  return (
    <>
      {task.attempts}{' '}
      <span class="muted" data-interrupted-attempts={task.interruptedAttempts}>
        ({task.interruptedAttempts} interrupted)
      </span>
    </>
  );
}

function Timeline({ logs, namesById }: { logs: LogEntry[]; namesById: Map<string, string> }) {
  if (logs.length === 0) return <p class="muted">Nothing written yet.</p>;
  return (
    <ol class="timeline" tabIndex={0} aria-label="Log entries, oldest first">
      {logs.map((entry) => (
        <li key={entry.id} class={`log level-${entry.level}`}>
          <time dateTime={entry.timeStamp}>{formatDateTime(entry.timeStamp).slice(11)}</time>
          <span class="log-level">{entry.level}</span>
          <span class="log-source">
            {entry.taskExecutionId ? (namesById.get(entry.taskExecutionId) ?? 'task') : 'run'}
          </span>
          <span class="log-message">
            {entry.message}
            {entry.exception && <pre class="exception">{entry.exception}</pre>}
          </span>
        </li>
      ))}
    </ol>
  );
}
