/**
 * Where each task of a definition goes on the graph: dagre's layered layout (the Sugiyama method)
 * of the tasks, with an edge per dependency, per `runOnFailureOf` and per `TriggerTask` handler.
 * Edges to tasks the definition does not have are left out (the editor reports them).
 */
import dagre from '@dagrejs/dagre';
import type { GraphDefinition, GraphTask } from './definition.js';

/**
 * The part of dagre's graph this module uses. dagre's own declarations reach @dagrejs/graphlib's,
 * whose relative imports have no file extension, which NodeNext resolution cannot follow.
 */
interface LayoutGraph {
  setGraph(label: {
    rankdir: Direction;
    nodesep: number;
    ranksep: number;
    marginx: number;
    marginy: number;
  }): void;
  setDefaultEdgeLabel(label: () => object): void;
  setNode(name: string, label: { width: number; height: number }): void;
  setEdge(from: string, to: string, label: { minlen: number; weight: number }, name: string): void;
  node(name: string): { x: number; y: number; width: number; height: number };
  edge(from: string, to: string, name: string): { points?: Point[] };
  graph(): { width?: number; height?: number };
}

const layered = dagre as unknown as {
  graphlib: { Graph: new (options: { multigraph: boolean }) => LayoutGraph };
  layout: (graph: LayoutGraph) => void;
};

export type EdgeKind = 'dependency' | 'failure' | 'trigger';

export interface Point {
  x: number;
  y: number;
}

export interface LaidOutTask {
  task: GraphTask;
  /** The node's top-left corner and size. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LaidOutEdge {
  from: string;
  to: string;
  kind: EdgeKind;
  points: Point[];
}

export interface GraphLayout {
  width: number;
  height: number;
  tasks: LaidOutTask[];
  edges: LaidOutEdge[];
}

/** Left to right on a wide screen, top to bottom on a narrow one. */
export type Direction = 'LR' | 'TB';

export const nodeHeight = 72;
const margin = 16;

/** The second line of a task's node: what carries it out. */
export function kindText(task: GraphTask): string {
  if (task.approval) return `Approval gate · ${task.typeLabel}`;
  return task.kind === 'configuration' ? `Configuration ${task.typeLabel}` : task.typeLabel;
}

/**
 * Wide enough for the longest of the node's lines (the name in bold, what carries the task out,
 * the longest status), within bounds: longer text is cut.
 */
export function nodeWidth(task: GraphTask): number {
  const text = Math.max(
    task.name.length * 8.4,
    kindText(task).length * 6.9,
    'Waiting for approval'.length * 7.2,
  );
  return Math.min(300, Math.max(160, Math.round(text) + (task.condition ? 52 : 30)));
}

/** The edges of a definition, each once, only between tasks it has. */
export function edgesOf(
  definition: GraphDefinition,
): { from: string; to: string; kind: EdgeKind }[] {
  const known = new Set(definition.tasks.map((task) => task.name));
  const edges = new Map<string, { from: string; to: string; kind: EdgeKind }>();
  const add = (from: string, to: string, kind: EdgeKind) => {
    if (known.has(from) && known.has(to) && from !== to) {
      edges.set(JSON.stringify([from, to, kind]), { from, to, kind });
    }
  };
  for (const task of definition.tasks) {
    for (const dependency of task.dependencies) add(dependency, task.name, 'dependency');
    for (const failed of task.runOnFailureOf) add(failed, task.name, 'failure');
    if (task.triggers) add(task.name, task.triggers, 'trigger');
  }
  return [...edges.values()];
}

export function layoutGraph(definition: GraphDefinition, direction: Direction): GraphLayout {
  const graph = new layered.graphlib.Graph({ multigraph: true });
  graph.setGraph({
    rankdir: direction,
    nodesep: direction === 'LR' ? 28 : 24,
    ranksep: direction === 'LR' ? 64 : 48,
    marginx: margin,
    marginy: margin,
  });
  graph.setDefaultEdgeLabel(() => ({}));
  // Duplicate names are an error the editor reports; the graph draws the first of each.
  const tasks = new Map<string, GraphTask>();
  for (const task of definition.tasks) if (!tasks.has(task.name)) tasks.set(task.name, task);
  for (const task of tasks.values()) {
    graph.setNode(task.name, { width: nodeWidth(task), height: nodeHeight });
  }
  const edges = edgesOf(definition);
  for (const edge of edges) {
    // Handlers sit after what they handle, but a failure edge should not stretch the layout.
    graph.setEdge(
      edge.from,
      edge.to,
      { minlen: 1, weight: edge.kind === 'dependency' ? 2 : 1 },
      edge.kind,
    );
  }
  layered.layout(graph);
  const laidOut = [...tasks.values()].map((task) => {
    const node = graph.node(task.name);
    return {
      task,
      x: node.x - node.width / 2,
      y: node.y - node.height / 2,
      width: node.width,
      height: node.height,
    };
  });
  const label = graph.graph();
  return {
    width: Math.max(label.width ?? 0, margin * 2),
    height: Math.max(label.height ?? 0, margin * 2),
    tasks: laidOut,
    edges: edges.map((edge) => ({
      ...edge,
      points: (graph.edge(edge.from, edge.to, edge.kind).points ?? []).map(({ x, y }) => ({
        x,
        y,
      })),
    })),
  };
}
