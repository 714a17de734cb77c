/**
 * The console's home: how the project's runs are going. Runs over time by status and the failure
 * rate by bucket (charts), the figures of the range (failure rate, p50 and p95 duration), what
 * runs and waits now, the recent failures with the task that failed them, and the approvals
 * waiting. Everything is the API's summary (`GET /executions/summary`); nothing pages through runs.
 */
import type { components, TrellisClient } from '@trellis/sdk';
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { Chart, stackedBars, type ChartOptions } from '../components/chart.js';
import { Loading, shortId, useLoad } from '../components/common.js';
import { formatDateTime, formatDuration } from '../format.js';
import { Link } from '../router.js';

type Summary = components['schemas']['ExecutionSummary'];
type Counts = components['schemas']['ExecutionStatusCounts'];

/** The ranges offered, each with the bucket that keeps its chart readable. */
const ranges = {
  day: { label: 'Last 24 hours', hours: 24, bucket: 'hour' },
  week: { label: 'Last 7 days', hours: 24 * 7, bucket: 'hour' },
  month: { label: 'Last 30 days', hours: 24 * 30, bucket: 'day' },
} as const;
type RangeKey = keyof typeof ranges;

/** The statuses as charted, bottom of the stack first, in the page's chart colours (light or dark). */
const charted: { key: keyof Counts; label: string; colour: string }[] = [
  { key: 'completed', label: 'Completed', colour: 'var(--chart-completed)' },
  { key: 'failed', label: 'Failed', colour: 'var(--chart-failed)' },
  { key: 'canceled', label: 'Canceled', colour: 'var(--chart-canceled)' },
  { key: 'running', label: 'Running', colour: 'var(--chart-running)' },
  { key: 'pending', label: 'Pending', colour: 'var(--chart-pending)' },
  { key: 'paused', label: 'Waiting for approval', colour: 'var(--chart-paused)' },
];

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)} %`);
const duration = (ms: number | null) => (ms === null ? '—' : formatDuration(ms));

export function OverviewPage({
  client,
  projectName,
}: {
  client: TrellisClient;
  projectName: string;
}) {
  const [range, setRange] = useState<RangeKey>('day');
  const summary = useLoad(() => {
    const { hours, bucket } = ranges[range];
    const to = new Date();
    const from = new Date(to.getTime() - hours * 3_600_000);
    return client.GET('/executions/summary', {
      params: { query: { from: from.toISOString(), to: to.toISOString(), bucket } },
    });
  }, [range]);
  return (
    <main id="main">
      <h1>Overview</h1>
      <p class="lead">How the runs of project {projectName} are going.</p>
      <form class="filters range" aria-label="Range" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="overview-range">Range</label>
          <select
            id="overview-range"
            value={range}
            onChange={(event) => setRange(event.currentTarget.value as RangeKey)}
          >
            {(Object.keys(ranges) as RangeKey[]).map((key) => (
              <option key={key} value={key}>
                {ranges[key].label}
              </option>
            ))}
          </select>
        </div>
      </form>
      <Loading loaded={summary}>{(data) => <SummaryView summary={data} />}</Loading>
    </main>
  );
}

function SummaryView({ summary }: { summary: Summary }) {
  const runs = charted.reduce((sum, { key }) => sum + summary.totals[key], 0);
  return (
    <>
      <dl class="figures" aria-label="Figures">
        <Figure name="Runs" value={String(runs)} />
        <Figure name="Failure rate" value={percent(summary.failureRate)} />
        <Figure name="Duration p50" value={duration(summary.durationP50Ms)} />
        <Figure name="Duration p95" value={duration(summary.durationP95Ms)} />
        <Figure name="Running now" value={String(summary.runningNow)} />
        <Figure name="Waiting for approval now" value={String(summary.pausedNow)} />
        <Figure
          name="Approvals waiting"
          value={<Link to="/approvals">{String(summary.approvalsWaiting)}</Link>}
        />
      </dl>
      <div class="charts">
        <section>
          <h2>Runs over time</h2>
          <RunsChart summary={summary} />
        </section>
        <section>
          <h2>Failure rate</h2>
          <FailureRateChart summary={summary} />
        </section>
      </div>
      <section>
        <h2>Recent failures</h2>
        {summary.recentFailures.length === 0 ? (
          <p class="muted">No run failed in this range.</p>
        ) : (
          <ul class="plain-list failures">
            {summary.recentFailures.map((failure) => (
              <li key={failure.id} data-execution={failure.id}>
                <Link to={`/workflows/${failure.workflowId}/runs/${failure.id}`}>
                  {failure.workflowName} · run {shortId(failure.id)}
                </Link>{' '}
                <span class="muted">
                  {formatDateTime(failure.executionEnd ?? failure.executionStart)}
                </span>
                <div>
                  {failure.taskName ? (
                    <>
                      Task <strong>{failure.taskName}</strong>:{' '}
                    </>
                  ) : null}
                  <span class="message">{failure.message || 'No message.'}</span>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

function Figure({ name, value }: { name: string; value: ComponentChildren }) {
  return (
    <div class="figure">
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}

const times = (summary: Summary) =>
  summary.buckets.map((bucket) => Date.parse(bucket.start) / 1000);

function RunsChart({ summary }: { summary: Summary }) {
  const { options, data } = useMemo((): { options: ChartOptions; data: uPlot.AlignedData } => {
    const { stacked, bars } = stackedBars(
      charted.map(({ key }) => summary.buckets.map((bucket) => bucket.counts[key])),
    );
    // The top of the stack is drawn first, each lower series over it.
    const order = charted.map((_, index) => index).reverse();
    return {
      data: [times(summary), ...order.map((index) => stacked[index]!)],
      options: {
        legend: { show: false },
        cursor: { show: false },
        scales: {
          x: { time: true },
          y: { range: (_plot, _min, max) => [0, Math.max(max, 1)] },
        },
        series: [
          {},
          ...order.map((index) => ({
            label: charted[index]!.label,
            stroke: charted[index]!.colour,
            fill: charted[index]!.colour,
            width: 0,
            paths: bars,
            points: { show: false },
          })),
        ],
      },
    };
  }, [summary]);
  return (
    <>
      <Chart
        label={`Runs per ${summary.bucket} by status: ${charted
          .map(({ key, label }) => `${summary.totals[key]} ${label.toLowerCase()}`)
          .join(', ')}`}
        options={options}
        data={data}
      />
      <ul class="legend">
        {charted.map(({ key, label }) => (
          <li key={key}>
            <span class={`swatch swatch-${key}`} aria-hidden="true" />
            {label} {summary.totals[key]}
          </li>
        ))}
      </ul>
    </>
  );
}

function FailureRateChart({ summary }: { summary: Summary }) {
  const { options, data } = useMemo((): { options: ChartOptions; data: uPlot.AlignedData } => {
    const rates = summary.buckets.map(({ counts }) => {
      const finished = counts.completed + counts.failed + counts.canceled;
      return finished === 0 ? null : (100 * counts.failed) / finished;
    });
    return {
      data: [times(summary), rates],
      options: {
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true }, y: { range: [0, 100] } },
        axes: [{}, { size: 56, values: (_plot, ticks) => ticks.map((tick) => `${tick} %`) }],
        series: [
          {},
          {
            label: 'Failure rate',
            stroke: 'var(--chart-failed)',
            width: 2,
            spanGaps: true,
            points: { size: 5 },
          },
        ],
      },
    };
  }, [summary]);
  return (
    <Chart
      label={`Failed among finished runs per ${summary.bucket}; over the range ${percent(summary.failureRate)}`}
      options={options}
      data={data}
    />
  );
}
