/**
 * A definition drawn as its DAG in SVG: a node per task (a plugin, a configuration, an approval
 * gate; a condition marked), an edge per dependency (solid), `runOnFailureOf` (dashed) and
 * `TriggerTask` handler (dotted); on a run, each node coloured by its task's live status, which it
 * also states in words.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { GraphDefinition, GraphTask } from '../definition.js';
import { kindText, layoutGraph, type Direction, type EdgeKind, type Point } from '../layout.js';
import type { TaskStatus } from '../run-state.js';
import { statusLabel } from './status.js';

export interface DagViewProps {
  definition: GraphDefinition;
  /** The accessible name of the drawing. */
  label: string;
  /** Each task's status by name, on a run's page. */
  statuses?: Record<string, TaskStatus>;
  selected?: string | null;
  /** Makes nodes buttons (click, Enter, Space). */
  onSelect?: (name: string) => void;
}

const wideQuery = '(min-width: 900px)';

/** Left to right where there is room, top to bottom on a phone. */
function useDirection(): Direction {
  const [wide, setWide] = useState(() => matchMedia(wideQuery).matches);
  useEffect(() => {
    const query = matchMedia(wideQuery);
    const update = () => setWide(query.matches);
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return wide ? 'LR' : 'TB';
}

const edgeKinds: EdgeKind[] = ['dependency', 'failure', 'trigger'];

export function DagView({ definition, label, statuses, selected, onSelect }: DagViewProps) {
  const direction = useDirection();
  const layout = useMemo(() => layoutGraph(definition, direction), [definition, direction]);
  if (definition.tasks.length === 0) {
    return <p class="muted">No tasks to draw yet.</p>;
  }
  return (
    <div class="dag">
      {/* Focusable so that a graph larger than its box scrolls from the keyboard too. */}
      <div class="dag-scroll" tabIndex={0} role="region" aria-label={`${label} (scrolls)`}>
        <svg
          class="dag-svg"
          role="group"
          aria-label={label}
          viewBox={`0 0 ${layout.width} ${layout.height}`}
          width={layout.width}
          height={layout.height}
        >
          <defs>
            {edgeKinds.map((kind) => (
              <marker
                key={kind}
                id={`arrow-${kind}`}
                class={`arrow arrow-${kind}`}
                viewBox="0 0 10 10"
                refX="9"
                refY="5"
                markerWidth="7"
                markerHeight="7"
                orient="auto-start-reverse"
              >
                <path d="M 0 0 L 10 5 L 0 10 z" />
              </marker>
            ))}
          </defs>
          {layout.edges.map((edge) => (
            <path
              key={`${edge.kind}:${edge.from}:${edge.to}`}
              class={`edge edge-${edge.kind}`}
              d={pathThrough(edge.points)}
              marker-end={`url(#arrow-${edge.kind})`}
              data-edge={`${edge.from}->${edge.to}`}
              data-kind={edge.kind}
            />
          ))}
          {layout.tasks.map(({ task, x, y, width, height }) => (
            <TaskNode
              key={task.name}
              task={task}
              x={x}
              y={y}
              width={width}
              height={height}
              status={statuses?.[task.name]}
              selected={selected === task.name}
              onSelect={onSelect}
            />
          ))}
        </svg>
      </div>
      <Legend />
    </div>
  );
}

interface TaskNodeProps {
  task: GraphTask;
  x: number;
  y: number;
  width: number;
  height: number;
  status: TaskStatus | undefined;
  selected: boolean;
  onSelect: ((name: string) => void) | undefined;
}

function TaskNode({ task, x, y, width, height, status, selected, onSelect }: TaskNodeProps) {
  const kind = task.approval ? 'approval' : task.kind;
  // The node's words are its accessible name (what is shown is what is said); the condition,
  // shown only as a mark, is its description.
  const description = task.condition ? `Runs only if ${task.condition}` : undefined;
  const select = onSelect ? () => onSelect(task.name) : undefined;
  const onKeyDown = (event: KeyboardEvent) => {
    if (select && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      select();
    }
  };
  const nameCharacters = Math.floor((width - (task.condition ? 48 : 24)) / 8.4);
  const kindCharacters = Math.floor((width - 24) / 6.9);
  return (
    <g
      class={`node node-${kind}${task.condition ? ' node-conditional' : ''} status-${status ?? 'none'}${selected ? ' selected' : ''}`}
      transform={`translate(${x} ${y})`}
      data-task={task.name}
      data-status={status ?? ''}
      role={select ? 'button' : undefined}
      tabindex={select ? 0 : undefined}
      aria-description={description}
      aria-pressed={select ? selected : undefined}
      onClick={select}
      onKeyDown={onKeyDown}
    >
      <rect class="node-box" width={width} height={height} rx="8" />
      {task.approval && (
        <rect class="node-gate" x="4" y="4" width={width - 8} height={height - 8} rx="5" />
      )}
      {task.condition && (
        <g class="node-condition" transform={`translate(${width - 22} 6)`} aria-hidden="true">
          <path d="M 8 0 L 16 8 L 8 16 L 0 8 z" />
          <text x="8" y="11.5">
            ?
          </text>
        </g>
      )}
      <text class="node-name" x="12" y="23">
        {cut(task.name || '(unnamed)', nameCharacters)}
      </text>
      <text class="node-kind" x="12" y="42">
        {cut(kindText(task), kindCharacters)}
      </text>
      <text class="node-status" x="12" y="60">
        {status ? statusLabel(status) : task.condition ? 'conditional' : ''}
      </text>
    </g>
  );
}

function Legend() {
  return (
    <ul class="legend" aria-label="How to read the graph">
      <li>
        <span class="swatch swatch-plugin" aria-hidden="true" /> plugin task
      </li>
      <li>
        <span class="swatch swatch-approval" aria-hidden="true" /> approval gate
      </li>
      <li>
        <span class="swatch swatch-condition" aria-hidden="true" /> runs only if its condition holds
      </li>
      <li>
        <span class="line line-dependency" aria-hidden="true" /> depends on
      </li>
      <li>
        <span class="line line-failure" aria-hidden="true" /> runs on failure of
      </li>
      <li>
        <span class="line line-trigger" aria-hidden="true" /> triggered on failure
      </li>
    </ul>
  );
}

function cut(text: string, characters: number): string {
  return text.length <= characters ? text : `${text.slice(0, Math.max(1, characters - 1))}…`;
}

/** A smooth path through dagre's points (a quadratic curve through each bend's midpoints). */
function pathThrough(points: Point[]): string {
  const [first, ...rest] = points;
  if (!first) return '';
  if (rest.length < 2)
    return `M ${first.x} ${first.y} ${rest.map((p) => `L ${p.x} ${p.y}`).join(' ')}`;
  let d = `M ${first.x} ${first.y}`;
  for (let index = 0; index < rest.length - 1; index += 1) {
    const control = rest[index]!;
    const next = rest[index + 1]!;
    const end =
      index === rest.length - 2
        ? next
        : { x: (control.x + next.x) / 2, y: (control.y + next.y) / 2 };
    d += ` Q ${control.x} ${control.y} ${end.x} ${end.y}`;
  }
  return d;
}
