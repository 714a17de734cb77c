import type { Kysely } from 'kysely';
import type { TrellisConfig } from '#platform/config/types.js';
import type { TemporalClient } from '#platform/temporal/connection.js';
import type { Database, WorkflowRow } from '#store/tables.js';
import * as workflowRepository from '#store/workflow-repository.js';
import { canonicalDefinitionText, unifiedDiff } from '#definition/definition-diff.js';
import { Conflict, Invalid, TrellisError } from '#definition/errors.js';
import { parseDefinition } from '#definition/parse.js';
import type { WorkflowDefinition } from '#definition/types.js';
import { problemsWithin, type Problem } from '#definition/validation/problem.js';
import { checkInterfaceChange, type BreakingChange } from './interface-check.js';
import { assertNoActiveExecutions, removeWorkflow } from './remove-workflow.js';
import { validateWorkflowDefinition, type PluginLookup } from './validate-definition.js';

/** What applying does to one workflow. */
export type ApplyAction = 'created' | 'updated' | 'unchanged' | 'deleted';

/** One workflow of an apply's plan; `id` and `revision` once stored (or as they stay). */
export interface AppliedWorkflow {
  name: string;
  action: ApplyAction;
  id: string | null;
  revision: number | null;
  /** Stored against given, as {@link unifiedDiff} writes it; empty when unchanged. */
  diff: string;
}

export interface ApplyRequest {
  project: { id: string; name: string };
  /** The definitions' texts, in the order given (problems name their index). */
  definitions: readonly string[];
  source?: string;
  dryRun: boolean;
  prune: boolean;
  acceptBreaking: boolean;
}

export interface ApplyDeps {
  db: Kysely<Database>;
  temporal: TemporalClient;
  config: TrellisConfig;
  plugins?: PluginLookup;
}

export interface ApplyResult {
  workflows: AppliedWorkflow[];
  /** The breaking changes `acceptBreaking` let through, by workflow name. */
  accepted: { name: string; breaks: BreakingChange[] }[];
}

/** A step of the plan with what storing it needs. */
interface Step extends AppliedWorkflow {
  text?: string;
  existing?: WorkflowRow;
}

const placeOf = (index: number) => `body.workflows[${index}].definition`;

/**
 * Makes a project's workflows match `definitions`, matched by name: each new name added, each
 * changed definition stored as a new revision carrying `source`, each same one (as its canonical
 * text: key case, order and spacing aside) left alone, and with `prune` each workflow no
 * definition names deleted. Everything is checked first, as add, update and delete check it
 * (validation, the breaking-change check, no run in progress), and every refusal is told at once;
 * then the changes are stored in one transaction, unless `dryRun`.
 */
export async function applyWorkflows(deps: ApplyDeps, request: ApplyRequest): Promise<ApplyResult> {
  const { db, config } = deps;
  const limits = config.Definitions;
  const stored = new Map(
    (await workflowRepository.listWithDefinitions(db, request.project.id)).map((row) => [
      row.name,
      row,
    ]),
  );

  const invalid: Problem[] = [];
  const given = new Map<string, number>();
  const parsed: { index: number; text: string; definition: WorkflowDefinition }[] = [];
  for (const [index, text] of request.definitions.entries()) {
    const told = (problems: Problem[]) => problemsWithin(placeOf(index), problems);
    const name = nameOf(text, limits);
    const earlier = name === undefined ? undefined : given.get(name);
    if (earlier !== undefined) {
      invalid.push({
        code: 'workflow.name_taken',
        path: placeOf(index),
        message: `names workflow "${name}" as ${placeOf(earlier)} does: one definition per workflow`,
      });
      continue;
    }
    if (name !== undefined) given.set(name, index);
    const existing = name === undefined ? undefined : stored.get(name);
    const definition = await refusal(invalid, () =>
      validateWorkflowDefinition(
        db,
        request.project.id,
        text,
        limits,
        deps.plugins,
        existing && { id: existing.id },
        told,
      ),
    );
    if (definition) parsed.push({ index, text, definition });
  }
  if (invalid.length > 0) throw new Invalid(invalid);

  const conflicts: Problem[] = [];
  const accepted: ApplyResult['accepted'] = [];
  const steps: Step[] = [];
  for (const { index, text, definition } of parsed) {
    const existing = stored.get(definition.name);
    const diff = diffOf(definition.name, existing && canonicalOf(existing.definition, limits), {
      definition,
    });
    if (!existing) {
      steps.push({
        name: definition.name,
        action: 'created',
        id: null,
        revision: null,
        diff,
        text,
      });
      continue;
    }
    const same = { name: existing.name, id: existing.id, revision: existing.revision };
    if (diff === '') {
      steps.push({ ...same, action: 'unchanged', diff });
      continue;
    }
    const breaks = await refusal(
      conflicts,
      () => checkInterfaceChange(db, existing, definition, limits, request.acceptBreaking),
      (problem) => ({
        ...problem,
        path: `${placeOf(index)}.${problem.path ?? ''}`.replace(/\.$/, ''),
        message: `workflow "${existing.name}": ${problem.message}`,
      }),
    );
    if (breaks && breaks.length > 0) accepted.push({ name: existing.name, breaks });
    steps.push({ ...same, action: 'updated', diff, text, existing });
  }
  if (request.prune) {
    for (const row of stored.values()) {
      if (given.has(row.name)) continue;
      await refusal(conflicts, () => assertNoActiveExecutions(db, row));
      const diff = diffOf(row.name, canonicalOf(row.definition, limits), undefined);
      steps.push({
        name: row.name,
        action: 'deleted',
        id: row.id,
        revision: null,
        diff,
        existing: row,
      });
    }
  }
  if (conflicts.length > 0) throw new Conflict(conflicts);

  if (!request.dryRun) await store(deps, request, steps);
  const workflows = steps.map(({ name, action, id, revision, diff }) => ({
    name,
    action,
    id,
    revision,
    diff,
  }));
  return { workflows, accepted };
}

/** Stores the plan's changes in one transaction, filling in the ids and revisions they get. */
async function store(deps: ApplyDeps, request: ApplyRequest, steps: Step[]): Promise<void> {
  const source = request.source ?? null;
  await deps.db.transaction().execute(async (trx) => {
    for (const step of steps) {
      if (step.action === 'created') {
        const row = await workflowRepository.insert(trx, {
          projectId: request.project.id,
          name: step.name,
          definition: step.text!,
          source,
        });
        Object.assign(step, { id: row.id, revision: row.revision });
      } else if (step.action === 'updated') {
        const row = await workflowRepository.update(trx, step.existing!.id, {
          name: step.name,
          definition: step.text!,
          source,
        });
        if (!row) throw gone(step.name);
        step.revision = row.revision;
      } else if (step.action === 'deleted') {
        const removed = await removeWorkflow(
          trx,
          deps.temporal,
          deps.config,
          request.project.name,
          step.existing!.id,
        );
        if (!removed) throw gone(step.name);
      }
    }
  });
}

const gone = (name: string) =>
  new Conflict(`Workflow "${name}" changed while it was applied; apply again.`, {
    code: 'workflow.changed',
  });

/**
 * What `work` returns, or undefined when it refuses (a domain error), its problems then added to
 * `problems` (each as `place` tells it), so that every refusal is told at once.
 */
async function refusal<T>(
  problems: Problem[],
  work: () => Promise<T>,
  place: (problem: Problem) => Problem = (problem) => problem,
): Promise<T | undefined> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof TrellisError)) throw error;
    problems.push(...error.problems.map(place));
    return undefined;
  }
}

/** The definition's name, when its text parses (else its validation says why). */
function nameOf(text: string, limits: TrellisConfig['Definitions']): string | undefined {
  const parsed = parseDefinition(text, limits);
  return parsed.ok ? parsed.definition.name : undefined;
}

/**
 * A stored definition's canonical text: its keys canonical when it still parses, else the JSON
 * as stored (then any given definition differs from it).
 */
function canonicalOf(text: string, limits: TrellisConfig['Definitions']): string {
  const parsed = parseDefinition(text, limits);
  if (parsed.ok) return canonicalDefinitionText(parsed.definition);
  try {
    return canonicalDefinitionText(JSON.parse(text));
  } catch {
    return `${text}\n`;
  }
}

function diffOf(
  name: string,
  before: string | undefined,
  after: { definition: WorkflowDefinition } | undefined,
): string {
  return unifiedDiff(
    { label: `a/${name}.json`, text: before ?? null },
    { label: `b/${name}.json`, text: after ? canonicalDefinitionText(after.definition) : null },
  );
}
