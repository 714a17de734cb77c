/**
 * A dry run's plan as it ran, on its run page: per task where its output came from and what it
 * would have done instead (its plugin and that plugin's effects, its parameters as resolved, the
 * approval it would have asked), then the approvals that would be asked and the branches skipped.
 */
import type { PlannedTask, OutputSource } from '../dry-run-plan.js';
import { Link } from '../router.js';
import { shortId } from './common.js';
import { EffectBadge, effectWords, isEffect } from './effects.js';
import { StatusBadge } from './status.js';

interface DryRunPlanProps {
  workflowId: string;
  plan: PlannedTask[];
  /** Whether the run has ended: a task not reached by then never will be. */
  finished: boolean;
}

export function DryRunPlan({ workflowId, plan, finished }: DryRunPlanProps) {
  const approvals = plan.filter((task) => task.approval !== null);
  const skipped = plan.filter((task) => task.status === 'Skipped');
  return (
    <section class="dry-run-plan" aria-labelledby="plan-heading">
      <h2 id="plan-heading">Dry run plan</h2>
      <p>
        Only tasks whose plugin is pure ran. Every other task returned an output from the source
        named below and performed nothing; no one was asked to approve and no notification went out.
      </p>
      <div class="table-scroll">
        <table>
          <caption class="visually-hidden">What each task of the dry run did, in order</caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Output from</th>
              <th scope="col">Instead of</th>
              <th scope="col">Parameters</th>
            </tr>
          </thead>
          <tbody>
            {plan.map((task) => (
              <tr key={task.name} data-plan-row={task.name}>
                <th scope="row">{task.name}</th>
                <td>
                  <Outcome workflowId={workflowId} task={task} finished={finished} />
                </td>
                <td>
                  <Instead task={task} />
                </td>
                <td>
                  {task.parameters === null ? (
                    '—'
                  ) : (
                    <details>
                      <summary>Parameters of {task.name}</summary>
                      <pre class="json" tabIndex={0}>
                        {JSON.stringify(task.parameters, null, 2)}
                      </pre>
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="columns">
        <div>
          <h3>Approvals that would be asked</h3>
          {approvals.length === 0 ? (
            <p class="muted">None.</p>
          ) : (
            <ul class="plain-list">
              {approvals.map((task) => (
                <li key={task.name}>
                  <strong>{task.name}</strong>
                  {task.approval?.comment ? `: “${task.approval.comment}”` : ''}
                </li>
              ))}
            </ul>
          )}
        </div>
        <div>
          <h3>Branches skipped</h3>
          {skipped.length === 0 ? (
            <p class="muted">None{finished ? ': every task was reached.' : ' so far.'}</p>
          ) : (
            <ul class="plain-list">
              {skipped.map((task) => (
                <li key={task.name}>
                  <strong>{task.name}</strong>
                  {task.message && <>: {task.message}</>}
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>
    </section>
  );
}

function Outcome({
  workflowId,
  task,
  finished,
}: {
  workflowId: string;
  task: PlannedTask;
  finished: boolean;
}) {
  if (task.sources.length > 0) {
    // A foreach task's items may have had different sources.
    return (
      <>
        {task.sources.map((source, index) => (
          <span key={index} class="plan-line">
            <Source workflowId={workflowId} source={source} />
          </span>
        ))}
      </>
    );
  }
  if (task.status === 'Skipped') return <>Skipped</>;
  if (task.status === null || task.status === 'Pending') {
    return <span class="muted">{finished ? 'Not reached' : 'Not yet'}</span>;
  }
  return <StatusBadge status={task.status} />;
}

function Source({ workflowId, source }: { workflowId: string; source: OutputSource }) {
  switch (source.kind) {
    case 'mock':
      return <span class="source source-mock">Mock from the request</span>;
    case 'recorded':
      return (
        <span class="source source-recorded">
          Recorded by run{' '}
          <Link
            to={`/workflows/${workflowId}/runs/${source.executionId}`}
            aria-label={`Recorded by run ${source.executionId}`}
          >
            <code>{shortId(source.executionId)}</code>
          </Link>
        </span>
      );
    case 'generated':
      return <span class="source source-generated">Generated from the output schema</span>;
    case 'ran':
      return <span class="source source-ran">Ran for real (pure)</span>;
  }
}

function Instead({ task }: { task: PlannedTask }) {
  const parts = [];
  if (task.plugin !== null) {
    const effects = task.effects ?? '';
    parts.push(
      <span key="plugin" class="plan-line">
        <code>{task.plugin}</code>{' '}
        {isEffect(effects) ? (
          <>
            <EffectBadge effects={effects} /> not run: it {effectWords[effects].toLowerCase()}.
          </>
        ) : (
          'not run.'
        )}
      </span>,
    );
  }
  if (task.approval !== null) {
    parts.push(
      <span key="approval" class="plan-line">
        Would ask for an approval
        {task.approval.comment ? ` (“${task.approval.comment}”)` : ''}; approved at once.
      </span>,
    );
  }
  if (task.status === 'Skipped' && task.message) {
    parts.push(
      <span key="skipped" class="plan-line">
        {task.message}
      </span>,
    );
  }
  return parts.length === 0 ? <>—</> : <>{parts}</>;
}
