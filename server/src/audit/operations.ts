import type { Kysely } from 'kysely';
import * as projectRepository from '#store/project-repository.js';
import type { AuditActorKind, Database } from '#store/tables.js';
import type { NewAuditEntry } from '#store/audit-repository.js';
import { apiKeyPrefix, looksLikeApiKey, lookupIdOf } from '#platform/security/api-key-secret.js';
import { parseBasicHeader } from '../auth/basic.js';
import { CredentialCache } from '../auth/credential-cache.js';
import { LoginLocked } from '../auth/login-guard.js';
import { HttpError } from '../http-error.js';
import { header, type Req } from '../request-context.js';
import type { RequestProject } from '../projects/request-project.js';
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
  /** The project of a public operation's target (a webhook's workflow, an approval link's run). */
  project?: RequestProject;
  targets?: Record<string, string>;
  /** The operation the entry names instead of the request's `operationId` (a dry run's start: `execution.dryRun`). */
  operation?: string;
}

/** What the trail knows of a request that changes something, from routing to its entry. */
interface RequestTrail {
  /** The client's address, as authentication counted it. */
  address: string;
  /**
   * How to read its path parameters as routed, for an entry recorded before they were validated
   * (a refused role, an invalid body); read only then.
   */
  pathParams: () => unknown;
  /** Past authentication: its operation's failures are recorded (before, only sign-ins). */
  admitted: boolean;
  recorded: boolean;
  note?: AuditNote;
}

// One entry per request the trail follows (one lookup where several sets would each cost one).
const trails = new WeakMap<Req, RequestTrail>();

/** Adds to the entry the request's operation will be recorded with. */
export function noteAudit(req: Req, note: AuditNote): void {
  const trail = trails.get(req);
  if (!trail) return;
  const earlier = trail.note;
  trail.note = { ...earlier, ...note, targets: { ...earlier?.targets, ...note.targets } };
}

/** Records a public operation's entry in the project of what it acted on. */
export async function noteProjectOf(req: Req, db: Kysely<Database>, projectId: string) {
  if (!trails.has(req)) return;
  const project = await projectRepository.findByIdOrName(db, projectId);
  if (project) noteAudit(req, { project: { id: project.id, name: project.name } });
}

/** An entry's project, by id and by the name it has as the entry is recorded; none for instance-wide operations. */
function projectFields(
  project: RequestProject | undefined,
): Pick<NewAuditEntry, 'project' | 'projectId'> {
  return { project: project?.name ?? null, projectId: project?.id ?? null };
}

const bearerToken = (authorization: string) => /^bearer\s+(\S+)/i.exec(authorization)?.[1];

/** How the caller authenticated, as an entry names it. */
function actorKind(req: Req): AuditActorKind {
  const authorization = header(req, 'authorization') ?? '';
  if (/^basic\s/i.test(authorization)) return 'user';
  const token = bearerToken(authorization);
  if (token !== undefined) return looksLikeApiKey(token) ? 'key' : 'oidc';
  return 'system';
}

/** Who refused credentials claim to be: a Basic name, or an API key's public part. */
function claimedActor(authorization: string): string | undefined {
  const lookupId = lookupIdOf(bearerToken(authorization) ?? '');
  return lookupId ? apiKeyPrefix(lookupId) : parseBasicHeader(authorization)?.name;
}

const readMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request's operation changes or decides something (what the trail records). */
function changesSomething(req: Req): boolean {
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

export function createRequestAudit(recorder: AuditRecorder) {
  const entry = (
    req: Req,
    address: string,
    fields: Pick<
      NewAuditEntry,
      'actor' | 'actorKind' | 'project' | 'projectId' | 'operation' | 'targets' | 'status'
    >,
  ): NewAuditEntry => ({ ...fields, requestId: req.requestId, address });
  // The single sign-on tokens this process has seen (hashed): a token's first request signs in.
  const seenTokens = new CredentialCache<true>(10_000, 24 * 60 * 60_000);

  return {
    /** A routed request, before authentication: the trail follows it when it changes something. */
    follow(req: Req, address: string, pathParams: () => unknown): void {
      if (changesSomething(req)) {
        trails.set(req, { address, pathParams, admitted: false, recorded: false });
      }
    },

    /** The request passed authentication and authorisation (or its operation is public). */
    admit(req: Req): void {
      const trail = trails.get(req);
      if (trail) trail.admitted = true;
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
      const trail = trails.get(req);
      if (!trail || trail.recorded) return;
      if (!trail.admitted && !req.user) return;
      trail.recorded = true;
      const { note } = trail;
      await recorder.record(
        entry(req, trail.address, {
          actor: req.user?.name ?? note?.actor ?? 'anonymous',
          actorKind: req.user ? actorKind(req) : 'system',
          ...projectFields(note?.project ?? req.project),
          operation:
            note?.operation ?? req.operation?.operationId ?? `${req.method} ${req.operation?.path}`,
          targets: targetsOf(
            { ...idsOf(outcome.params ?? trail.pathParams()), ...note?.targets },
            idsOf(outcome.data),
          ),
          status: outcome.status,
        }),
      );
    },

    /**
     * Records a single sign-on (`signIn`, 200): the first request this process sees with a token
     * of the single sign-on issuer, which is the console's first call once the provider sent the
     * user back. Each API process records a token's first use once.
     */
    async signedIn(req: Req, address: string): Promise<void> {
      const authorization = header(req, 'authorization');
      if (req.caller?.groups === undefined || authorization === undefined) return;
      if (seenTokens.get(authorization)) return;
      seenTokens.set(authorization, true);
      await recorder.record(
        entry(req, address, {
          actor: req.caller.name,
          actorKind: 'oidc',
          project: null,
          projectId: null,
          operation: 'signIn',
          targets: {},
          status: 200,
        }),
      );
    },

    /**
     * Records a sign-in refused while authenticating: bad credentials (`signIn`, 401) or a name
     * or address locked after too many of them (`signInLocked`, 429). Other errors are not
     * sign-ins.
     */
    async signInRefused(req: Req, address: string, error: unknown): Promise<void> {
      const authorization = header(req, 'authorization');
      if (authorization === undefined || !(error instanceof HttpError)) return;
      const locked = error instanceof LoginLocked;
      if (!locked && error.status !== 401) return;
      const trail = trails.get(req);
      if (trail) trail.recorded = true;
      const kind = actorKind(req);
      const claimed = claimedActor(authorization);
      await recorder.record(
        entry(req, address, {
          actor: claimed ?? 'unknown',
          actorKind: kind === 'system' ? 'user' : kind,
          ...projectFields(undefined),
          operation: locked ? 'signInLocked' : 'signIn',
          targets: {},
          status: error.status,
        }),
      );
    },
  };
}

export type RequestAudit = ReturnType<typeof createRequestAudit>;
