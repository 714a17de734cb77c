import type { Kysely } from 'kysely';
import * as auditRepository from '#store/audit-repository.js';
import { isUuid } from '#store/ids.js';
import * as projectRepository from '#store/project-repository.js';
import type { Database } from '#store/tables.js';
import type { HandlerMap } from '../handler.js';
import { requireInstanceAdmin } from '../projects/request-project.js';
import { callerOf } from '../request-context.js';
import type { Req } from '../request-context.js';

/**
 * The project whose entries a list shows. A project admin's is the request's (its `project`
 * filter, else its default project). An instance admin's `project` is a project's id, or a
 * name: that of a project now (its entries whatever it was called), else the name entries were
 * recorded with (a project renamed or deleted since).
 */
async function listedProject(
  db: Kysely<Database>,
  req: Req,
  key: string | undefined,
): Promise<auditRepository.AuditFilter['project']> {
  if (req.project) return { id: req.project.id };
  if (key === undefined) return undefined;
  if (isUuid(key)) return { id: key };
  const project = await projectRepository.findByIdOrName(db, key);
  return project ? { id: project.id } : { name: key };
}

/**
 * `/audit`: the audit trail, read and verified. Role: `admin`; instance admins read the whole
 * trail, a project's admins that project's entries, and only instance admins verify the chain.
 */
export const auditHandlers = {
  listAuditEntries: async ({ deps, req, query }) => {
    const { actor, operation, from, to, after } = query;
    const project = await listedProject(deps.db, req, query.project);
    const entries = await auditRepository.listEntries(
      deps.db,
      {
        ...(project === undefined ? {} : { project }),
        ...(actor === undefined ? {} : { actor }),
        ...(operation === undefined ? {} : { operation }),
        ...(from === undefined ? {} : { from: new Date(from) }),
        ...(to === undefined ? {} : { to: new Date(to) }),
      },
      { ...(after === undefined ? {} : { after }), limit: query.pageSize ?? 100 },
    );
    return {
      data: entries.map((entry) => ({
        id: entry.id,
        at: entry.at.toISOString(),
        actor: entry.actor,
        actorKind: entry.actorKind,
        project: entry.project,
        projectId: entry.projectId,
        operation: entry.operation,
        targets: entry.targets,
        status: entry.status,
        requestId: entry.requestId,
        address: entry.address,
      })),
    };
  },

  verifyAuditTrail: async ({ deps, req }) => {
    requireInstanceAdmin(deps.config, callerOf(req), 'verify the audit trail');
    const { entries, firstBreak } = await auditRepository.verifyChain(deps.db);
    return {
      data: { intact: firstBreak === null, entries, firstBreak },
      messages: [
        firstBreak === null
          ? `The audit trail holds: ${entries} entries verified.`
          : `The audit trail breaks at entry ${firstBreak.id} (${firstBreak.reason}).`,
      ],
    };
  },
} satisfies Partial<HandlerMap>;
