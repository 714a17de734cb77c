import { stripVTControlCharacters } from 'node:util';
import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import type { RunEvent, TaskEventData } from './events.js';
import { followRun } from './follow.js';
import { liveRunView, plainRunView } from './views.js';

const plain = pc.createColors(false);

let nextId = 1;
const execution = (status: 'Running' | 'Paused' | 'Completed' | 'Failed'): RunEvent => ({
  id: nextId++,
  event: 'execution',
  data: { status, message: '' },
});
const task = (name: string, status: TaskEventData['status'], message = ''): RunEvent => ({
  id: nextId++,
  event: 'task',
  data: { taskExecutionId: `id-${name}`, name, status, message },
});

async function* stream(events: RunEvent[]): AsyncGenerator<RunEvent> {
  yield* events;
}

/** A stream that keeps what is written, a terminal or not. */
function capture(isTTY: boolean) {
  const chunks: string[] = [];
  return { chunks, isTTY, columns: 100, rows: 40, write: (text: string) => chunks.push(text) };
}

const approvalRun = [
  execution('Running'),
  task('Wait', 'Pending'),
  task('Gate', 'Pending'),
  task('Wait', 'Running'),
  task('Wait', 'Completed', 'Completed in 500 ms.'),
  task('Gate', 'WaitingForApproval', 'Waiting for approval a1: Go ahead?'),
  { id: nextId++, event: 'approval', data: { id: 'a1', taskName: 'Gate', status: 'Pending' } },
  execution('Paused'),
  {
    id: nextId++,
    event: 'log',
    data: {
      id: 'l1',
      taskExecutionId: 'id-Gate',
      message: 'approved by ann',
      level: 'Info',
      timeStamp: '2026-11-24T12:00:00.000Z',
      exception: null,
    },
  },
  { id: nextId++, event: 'approval', data: { id: 'a1', taskName: 'Gate', status: 'Approved' } },
  execution('Running'),
  task('Gate', 'Completed', 'Completed in 1 ms.'),
  execution('Completed'),
  task('Late', 'Completed'),
] satisfies RunEvent[];

describe('followRun', () => {
  it('shows each change on a line of its own when not on a terminal, and stops at the end', async () => {
    const out = capture(false);
    const status = await followRun(
      stream(approvalRun),
      plainRunView(out, {
        colors: plain,
        taskNames: ['Wait', 'Gate'],
        logs: true,
        approveCommand: (name) => `trellis approvals approve W E ${name}`,
      }),
    );

    expect(status).toBe('Completed');
    expect(out.chunks.join('')).toBe(
      [
        'Execution Running',
        '[0/2] Wait Running',
        '[1/2] Wait Completed in 500 ms.',
        '[1/2] Gate WaitingForApproval: Waiting for approval a1: Go ahead?',
        'Gate waits for approval: trellis approvals approve W E Gate',
        'Execution Paused',
        '2026-11-24 12:00:00Z Info     Gate approved by ann',
        'Gate was approved',
        'Execution Running',
        '[2/2] Gate Completed in 1 ms.',
        'Execution Completed',
        '',
      ].join('\n'),
    );
  });

  it('leaves out log entries unless asked, and resolves to the failure', async () => {
    const out = capture(false);
    const events = [
      execution('Running'),
      task('B', 'Failed', 'Failed: cannot add null'),
      execution('Failed'),
    ];
    const status = await followRun(
      stream([...events.slice(0, 2), approvalRun[8]!, ...events.slice(2)]),
      plainRunView(out, { colors: plain }),
    );
    expect(status).toBe('Failed');
    expect(out.chunks.join('').split('\n')).toEqual([
      'Execution Running',
      '[1/1] B Failed: cannot add null',
      'Execution Failed',
      '',
    ]);
  });

  it('redraws the tasks and a progress line in place on a terminal', async () => {
    const out = capture(true);
    await followRun(
      stream(approvalRun),
      liveRunView(out, {
        colors: pc.createColors(true),
        taskNames: ['Wait', 'Gate'],
        title: 'Hello',
      }),
    );
    const written = out.chunks.join('');
    // Cursor movement and colours: the frame is rewritten, not appended.
    // eslint-disable-next-line no-control-regex -- the cursor-up sequence is what is checked
    expect(written).toMatch(/\u001b\[\d+A/);
    expect(written).toContain('\u001b[32m');
    const screen = stripVTControlCharacters(written);
    const lastFrame = screen.slice(screen.lastIndexOf('Hello'));
    expect(lastFrame).toContain('✔ Wait  Completed in 500 ms.');
    expect(lastFrame).toContain('✔ Gate  Completed in 1 ms.');
    expect(lastFrame).toMatch(/█{24} 2\/2 tasks {2}Completed/);
    // The approval request scrolled above the frame, outside it.
    expect(screen).toContain('Gate waits for approval');
    expect(lastFrame).not.toContain('waits for approval');
  });
});
