import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ListItem, TrellisClient } from '../client.js';
import type { paths } from '../generated/schema.js';
import { definitionInterface, type InputDeclaration } from './definition-text.js';

/** The longest tool name MCP clients accept. */
const maxToolName = 64;
const prefix = 'run_';

/** A stored workflow as its list shows it. */
interface WorkflowItem {
  id: string;
  name: string;
}

/**
 * The JSON Schema of a run's inputs, from the definition's declarations: each declared input a
 * property of its declared type (with its description and default), those a run must be given
 * required, and nothing else allowed (the server refuses an undeclared input).
 */
export function inputsSchema(inputs: Record<string, InputDeclaration>): Tool['inputSchema'] {
  const properties = Object.fromEntries(
    Object.entries(inputs).map(([name, { type, description, default: value }]) => [
      name,
      {
        type,
        ...(description === undefined ? {} : { description }),
        ...(value === undefined ? {} : { default: value }),
      },
    ]),
  );
  const required = Object.entries(inputs)
    .filter(([, declaration]) => declaration.required === true && declaration.default === undefined)
    .map(([name]) => name);
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/**
 * The name of each workflow's run tool: `run_` and its name with anything but letters, digits,
 * `_` and `-` made `_`. Names that come out alike (or too long) get the start of their id, so
 * every workflow keeps a tool of its own.
 */
export function runToolNames<W extends WorkflowItem>(workflows: readonly W[]): Map<string, W> {
  const plain = (workflow: WorkflowItem) =>
    `${prefix}${workflow.name.replace(/[^A-Za-z0-9_-]+/g, '_')}`;
  const counts = new Map<string, number>();
  for (const workflow of workflows) {
    const name = plain(workflow);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const tools = new Map<string, W>();
  for (const workflow of workflows) {
    const name = plain(workflow);
    const unique =
      counts.get(name) === 1 && name.length <= maxToolName
        ? name
        : `${name.slice(0, maxToolName - 9)}_${workflow.id.slice(0, 8)}`;
    tools.set(unique, workflow);
  }
  return tools;
}

/** True for the name of a run tool. */
export const isRunTool = (name: string): boolean => name.startsWith(prefix);

type StoredWorkflow = ListItem<paths['/workflows']['get']>;

/** Every stored workflow of the caller's project, page by page. */
export async function storedWorkflows(trellis: TrellisClient): Promise<StoredWorkflow[]> {
  const workflows: StoredWorkflow[] = [];
  for await (const item of trellis.all('/workflows', { params: { query: { pageSize: 1000 } } })) {
    workflows.push(item);
  }
  return workflows;
}

/** The run tool of one workflow, from its definition's declared inputs and outputs. */
export function runTool(name: string, workflow: WorkflowItem, definitionText: string): Tool {
  const declared = definitionInterface(definitionText);
  const outputs = Object.keys(declared.outputs);
  const description = [
    `Start a run of the workflow "${workflow.name}" (${workflow.id}) with these inputs.`,
    declared.description,
    outputs.length > 0 ? `A completed run gives back: ${outputs.join(', ')}.` : undefined,
    'Answers the new execution id at once; follow_execution waits for its end.',
  ].filter((line) => line !== undefined);
  return {
    name,
    title: `Run ${workflow.name}`,
    description: description.join(' '),
    inputSchema: inputsSchema(declared.inputs),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  };
}

/** How many definitions are read at once. */
const readsAtOnce = 8;

/**
 * The run tools of the caller's workflows, listed anew at each call; a definition is read again
 * only when its workflow's revision changed since the last call.
 */
export function runToolCatalog(trellis: TrellisClient): () => Promise<Tool[]> {
  const definitions = new Map<string, { revision: number; text: string }>();
  return async () => {
    const workflows = await storedWorkflows(trellis);
    const stale = workflows.filter(
      ({ id, revision }) => definitions.get(id)?.revision !== revision,
    );
    for (let start = 0; start < stale.length; start += readsAtOnce) {
      await Promise.all(
        stale.slice(start, start + readsAtOnce).map(async ({ id }) => {
          const detail = await trellis.GET('/workflows/{workflowId}', {
            params: { path: { workflowId: id } },
          });
          definitions.set(id, { revision: detail.revision, text: detail.workflow });
        }),
      );
    }
    return [...runToolNames(workflows)].flatMap(([name, workflow]) => {
      const definition = definitions.get(workflow.id);
      return definition ? [runTool(name, workflow, definition.text)] : [];
    });
  };
}
