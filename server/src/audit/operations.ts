import type { AuditActorKind } from '#store/tables.js';
import type { NewAuditEntry } from '#store/audit-repository.js';
import { parseBasicHeader } from '../auth/basic.js';
import { LoginLocked } from '../auth/login-guard.js';
import { HttpError } from '../http-error.js';
import { header, type Req } from '../request-context.js';
import type { AuditRecorder } from './recorder.js';

/**
 * What the audit trail records of requests: every operation that is not a read (a method other
 * than GET and HEAD in the contract), once its outcome is known and before the response reports
 * it; and refused sign-ins. Targets are ids only: those of the path, those the reply names, and
 * those a handler adds ({@link noteAudit}); never a body, never a credential.
 */

/** What a handler adds to its request's entry: ids the path and reply do not show, who acted on a public operation. */
interface AuditNote {
  actor?: string;
  targets?: Record<string, string>;
}

const notes = new WeakMap<Req, AuditNote>();
const recorded = new WeakSet<Req>();
/** Requests past authentication: their operation's failures are recorded (before, only sign-ins). */
const admitted = new WeakSet<Req>();

const pathParams = new WeakMap<Req, () => unknown>();

/**
 * How to read a request's path parameters as routed, for an entry recorded before they were
 * validated (a refused role, an invalid body); read only then.
 */
export function notePathParams(req: Req, params: () => unknown): void {
  if (changesSomething(req)) pathParams.set(req, params);
}

/** Adds to the entry the request's operation will be recorded with. */
export function noteAudit(req: Req, note: AuditNote): void {
  const earlier = notes.get(req);
  notes.set(req, {
    ...earlier,
    ...note,
    targets: { ...earlier?.targets, ...note.targets },
  });
}

/**
 * The project an entry belongs to: the installed plugins are the instance's, everything else
 * today is the `default` project's.
 */
export function auditProject(req: Req): string | null {
  return req.operation?.path.startsWith('/plugins') ? null : 'default';
}

/** How the caller authenticated, as an entry names it. */
function actorKind(req: Req): AuditActorKind {
  const authorization = header(req, 'authorization') ?? '';
  if (/^basic\s/i.test(authorization)) return 'user';
  if (/^bearer\s/i.test(authorization)) return 'oidc';
  return 'system';
}

const readMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request's operation changes or decides something (what the trail records). */
export function changesSomething(req: Req): boolean {
  return req.operation !== undefined && !readMethods.has(req.method ?? 'GET');
}

const isId = (name: string) => name === 'id' || name.endsWith('Id');

/** The string ids among an object's own fields (`workflowId`, `id`, ...). */
function idsOf(values: unknown): Record<string, string> {
  if (typeof values !== 'object' || values === null || Array.isArray(values)) return {};
  return Object.fromEntries(
    Object.entries(values).filter(
      (field): field is [string, string] => isId(field[0]) && typeof field[1] === 'string',
    ),
  );
}

/**
 * The path's ids (and a handler's) with the reply's: a reply's id that differs from the path's of
 * the same name is a new thing (a rerun's execution) and is kept as `created<Name>`.
 */
function targetsOf(named: Record<string, string>, replied: Record<string, string>) {
  const targets = { ...named };
  for (const [name, id] of Object.entries(replied)) {
    const given = targets[name];
    if (given === undefined) targets[name] = id;
    else if (given !== id) targets[`created${name[0]!.toUpperCase()}${name.slice(1)}`] = id;
  }
  return targets;
}

export function createRequestAudit(recorder: AuditRecorder, addressOf: (req: Req) => string) {
  const entry = (
    req: Req,
    fields: Pick<
      NewAuditEntry,
      'actor' | 'actorKind' | 'project' | 'operation' | 'targets' | 'status'
    >,
  ): NewAuditEntry => ({ ...fields, requestId: req.requestId, address: addressOf(req) });

  return {
    /** The request passed authentication and authorisation (or its operation is public). */
    admit(req: Req): void {
      admitted.add(req);
    },

    /**
     * Records the request's operation with its outcome, once, when it changes something; `data`
     * is what the reply holds (its ids become targets beside the path's `params`). Resolves once
     * stored.
     */
    async answered(
      req: Req,
      outcome: { status: number; params?: unknown; data?: unknown },
    ): Promise<void> {
      if (!changesSomething(req) || recorded.has(req)) return;
      if (!admitted.has(req) && !req.user) return;
      recorded.add(req);
      const note = notes.get(req);
      await recorder.record(
        entry(req, {
          actor: req.user?.name ?? note?.actor ?? 'anonymous',
          actorKind: req.user ? actorKind(req) : 'system',
          project: auditProject(req),
          operation: req.operation?.operationId ?? `${req.method} ${req.operation?.path}`,
          targets: targetsOf(
            { ...idsOf(outcome.params ?? pathParams.get(req)?.()), ...note?.targets },
            idsOf(outcome.data),
          ),
          status: outcome.status,
        }),
      );
    },

    /**
     * Records a sign-in refused while authenticating: bad credentials (`signIn`, 401) or a name
     * or address locked after too many of them (`signInLocked`, 429). Other errors are not
     * sign-ins.
     */
    async signInRefused(req: Req, error: unknown): Promise<void> {
      const authorization = header(req, 'authorization');
      if (authorization === undefined || !(error instanceof HttpError)) return;
      const locked = error instanceof LoginLocked;
      if (!locked && error.status !== 401) return;
      recorded.add(req);
      const kind = actorKind(req);
      const claimed = kind === 'user' ? parseBasicHeader(authorization)?.name : undefined;
      await recorder.record(
        entry(req, {
          actor: claimed ?? 'unknown',
          actorKind: kind === 'system' ? 'user' : kind,
          project: null,
          operation: locked ? 'signInLocked' : 'signIn',
          targets: {},
          status: error.status,
        }),
      );
    },
  };
}

export type RequestAudit = ReturnType<typeof createRequestAudit>;
