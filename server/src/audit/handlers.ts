import * as auditRepository from '#store/audit-repository.js';
import type { HandlerMap } from '../handler.js';

/** `/audit`: the audit trail, read and verified. Role: `admin`. */
export const auditHandlers = {
  listAuditEntries: async ({ deps, query }) => {
    const { project, actor, operation, from, to, after } = query;
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
        operation: entry.operation,
        targets: entry.targets,
        status: entry.status,
        requestId: entry.requestId,
        address: entry.address,
      })),
    };
  },

  verifyAuditTrail: async ({ deps }) => {
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
