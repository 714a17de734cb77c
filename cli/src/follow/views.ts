import { createLogUpdate } from 'log-update';
import { duration, statusColor, styleStatus, taskSymbol, time } from '../output/format.js';
import type { Colors, Stream } from '../output/output.js';
import { isTerminal, type LogEventData, type RunEvent, type TaskEventData } from './events.js';
import { RunState, type RunView } from './follow.js';

export interface RunViewOptions {
  colors: Colors;
  /** The definition's task names, in order: listed from the start. */
  taskNames?: readonly string[];
  /** Also show log entries. */
  logs?: boolean;
  /** The command that approves a task, shown beside a pending approval. */
  approveCommand?: (taskName: string) => string;
  /** When the run started (ISO), for the elapsed time. */
  startedAt?: string;
  /** The first line of the live view, e.g. the workflow and execution. */
  title?: string;
}

/** One line per change, for logs and pipes (no cursor movement, no redrawing). */
export function plainRunView(stream: Stream, options: RunViewOptions): RunView {
  const state = new RunState(options.taskNames);
  const { colors } = options;
  const write = (line: string) => stream.write(`${line}\n`);
  return {
    show(event) {
      if (event.event !== 'task') state.apply(event);
      switch (event.event) {
        case 'execution': {
          const { status, message } = event.data;
          write(
            `Execution ${styleStatus(colors, status)}${message ? `: ${oneLine(message)}` : ''}`,
          );
          return;
        }
        case 'task': {
          const before = state.tasks.get(event.data.name);
          state.apply(event);
          // The definition's tasks start Pending: saying so again is no change.
          if (before?.status === event.data.status && before.message === event.data.message) return;
          const { finished, total } = state.progress;
          write(`${colors.dim(`[${finished}/${total}]`)} ${taskLine(colors, event.data)}`);
          return;
        }
        case 'approval':
          write(approvalLine(options, event));
          return;
        case 'log':
          if (options.logs)
            write(logLine(colors, event.data, state.taskName(event.data.taskExecutionId)));
          return;
      }
    },
    close() {},
  };
}

/**
 * The run redrawn in place on a terminal: a line per task and a progress line under them; log
 * entries (with `logs`) and approval requests scroll above it.
 */
export function liveRunView(stream: Stream, options: RunViewOptions): RunView {
  const state = new RunState(options.taskNames);
  const { colors } = options;
  const update = createLogUpdate(stream as NodeJS.WritableStream);
  const since = options.startedAt ? Date.parse(options.startedAt) : Date.now();
  let until: number | undefined;
  const render = () => update(frame(state, options, (until ?? Date.now()) - since));
  const ticker = setInterval(render, 1000);
  ticker.unref();
  render();
  return {
    show(event) {
      state.apply(event);
      if (event.event === 'execution' && isTerminal(event.data.status)) until = Date.now();
      if (event.event === 'log' && options.logs) {
        update.persist(logLine(colors, event.data, state.taskName(event.data.taskExecutionId)));
      } else if (event.event === 'approval') {
        update.persist(approvalLine(options, event));
      }
      render();
    },
    close() {
      clearInterval(ticker);
      render();
      update.done();
    },
  };
}

function frame(state: RunState, options: RunViewOptions, elapsedMs: number): string {
  const { colors } = options;
  const tasks = [...state.tasks.values()];
  const width = Math.min(30, Math.max(0, ...tasks.map((task) => task.name.length)));
  const lines = options.title ? [colors.bold(options.title)] : [];
  for (const task of tasks) {
    const symbol = styleSymbol(colors, task);
    const [status, message] = statusAndMessage(colors, task);
    const note = message ? ` ${colors.dim(truncate(message, 100))}` : '';
    lines.push(`  ${symbol} ${task.name.padEnd(width)}  ${status}${note}`);
  }
  const { finished, total } = state.progress;
  const barWidth = 24;
  const filled = total === 0 ? 0 : Math.round((finished / total) * barWidth);
  const bar = colors.green('█'.repeat(filled)) + colors.dim('░'.repeat(barWidth - filled));
  const status = state.status ? styleStatus(colors, state.status) : colors.dim('Starting');
  lines.push(`  ${bar} ${finished}/${total} tasks  ${status}  ${colors.dim(duration(elapsedMs))}`);
  return lines.join('\n');
}

const styleSymbol = (colors: Colors, task: TaskEventData): string =>
  statusColor(colors, task.status)(taskSymbol[task.status]);

/** `Sum Completed in 3 ms.`, `B Failed: cannot add...`: the message after the status it repeats. */
function taskLine(colors: Colors, task: TaskEventData): string {
  const [status, message] = statusAndMessage(colors, task);
  return `${task.name} ${status}${message ? ` ${message}` : ''}`;
}

/** A task's status in colour and its message without the status word it may start with. */
function statusAndMessage(colors: Colors, task: TaskEventData): [string, string] {
  const message = oneLine(task.message);
  const status = styleStatus(colors, task.status);
  if (!message) return [status, ''];
  if (message.startsWith(task.status)) {
    const rest = message.slice(task.status.length);
    return rest.startsWith(':') ? [`${status}:`, rest.slice(1).trim()] : [status, rest.trim()];
  }
  return [`${status}:`, message];
}

function approvalLine(
  options: RunViewOptions,
  event: Extract<RunEvent, { event: 'approval' }>,
): string {
  const { taskName, status } = event.data;
  const { colors } = options;
  if (status !== 'Pending')
    return `${taskName} was ${statusColor(colors, status)(status.toLowerCase())}`;
  const how = options.approveCommand ? `: ${colors.bold(options.approveCommand(taskName))}` : '';
  return `${colors.magenta(taskName)} waits for approval${how}`;
}

/** A log entry on one line: time, level, where (task or execution), message; then its exception. */
export function logLine(colors: Colors, entry: LogEventData, taskName?: string): string {
  const level = levelStyle(colors, entry.level);
  const where = colors.dim(taskName ?? (entry.taskExecutionId ? 'task' : 'execution'));
  const line = `${colors.dim(time(entry.timeStamp))} ${level} ${where} ${entry.message}`;
  return entry.exception ? `${line}\n${colors.dim(indent(entry.exception))}` : line;
}

function levelStyle(colors: Colors, level: LogEventData['level']): string {
  const text = level.padEnd(8);
  switch (level) {
    case 'Error':
    case 'Critical':
      return colors.red(text);
    case 'Warning':
      return colors.yellow(text);
    case 'Info':
      return text;
    case 'Trace':
    case 'Debug':
      return colors.dim(text);
  }
}

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();
const truncate = (text: string, max: number) =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;
const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
