import type { Kysely } from 'kysely';
import { Forbidden, NotFound } from '#definition/errors.js';
import type { Role, TrellisConfig } from '#platform/config/types.js';
import { roles as everyRole } from '#platform/config/schema.js';
import { groupMemberPrefix } from '#platform/config/token-names.js';
import * as projectRepository from '#store/project-repository.js';
import type { Database, ProjectLimits, ProjectRow } from '#store/tables.js';
import type { AuthUser } from '../auth/user.js';

/** The project a request works in, as handlers see it. */
export interface RequestProject {
  id: string;
  name: string;
}

/** Where an operation takes its project from. */
export type ProjectScope =
  /** The `X-Trellis-Project` header, else the caller's default project. */
  | 'header'
  /** The `{projectId}` of its path (`/projects/{projectId}/...`). */
  | 'path'
  /** None: an instance-wide operation (plugins, `/me`, creating a project). */
  | 'instance'
  /**
   * The `project` filter of an instance-wide list (`/audit`): instance-wide for instance admins;
   * anyone else works in the project it names, else in their default project.
   */
  | 'filter';

export const projectHeader = 'x-trellis-project';

/** 404 for a project the caller may not see: the same answer as for one that does not exist. */
export const projectNotFound = (key: string) =>
  new NotFound(`Project "${key}" was not found.`, { code: 'project.not_found' });

/** Where the operation takes its project from, as its parameters in the contract say. */
export function projectScopeOf(operation: { parameters?: unknown[] }): ProjectScope {
  const parameters = (operation.parameters ?? []) as { in?: unknown; name?: unknown }[];
  if (parameters.some((p) => p.in === 'header' && String(p.name).toLowerCase() === projectHeader)) {
    return 'header';
  }
  if (parameters.some((p) => p.in === 'path' && p.name === 'projectId')) return 'path';
  if (parameters.some((p) => p.in === 'query' && p.name === 'project')) return 'filter';
  return 'instance';
}

/** The member names that stand for the caller: its own, and `group:<name>` for each of its groups. */
export function memberNamesOf(caller: AuthUser): string[] {
  return [caller.name, ...(caller.groups ?? []).map((group) => `${groupMemberPrefix}${group}`)];
}

/**
 * Whether the caller holds every role in every project: named in `Projects.InstanceAdmins`, or,
 * when that is absent, a configured user holding `admin`. `caller` is as authenticated, with its
 * configured roles.
 */
export function isInstanceAdmin(config: TrellisConfig, caller: AuthUser): boolean {
  if (caller.apiKey) return false;
  const named = config.Projects.InstanceAdmins;
  return named === undefined ? caller.roles.includes('admin') : named.includes(caller.name);
}

/** The one instance-wide operation an API key may call: `/me`, which only says who it is. */
const apiKeyInstanceOperations = new Set(['getCurrentUser']);

/** How long the `default` project's row (and its limits) is kept between reads. */
const defaultRefreshMs = 10_000;
/** 403 unless the caller is an instance admin; `action` says what only they may do. */
export function requireInstanceAdmin(
  config: TrellisConfig,
  caller: AuthUser,
  action: string,
): void {
  if (isInstanceAdmin(config, caller)) return;
  throw new Forbidden(
    `User "${caller.name}" may not ${action}; only instance admins (Projects.InstanceAdmins) may.`,
    { code: 'auth.forbidden' },
  );
}

/** A project the caller may work in, with its roles there. */
export interface ProjectRoles extends RequestProject {
  roles: Role[];
}

/**
 * Every project the caller may work in, by name, with its roles in each (as the resolver gives
 * them): instance admins every project with every role; configured users `default` with their
 * configured roles; the projects their membership rows (their groups' included) name; an API key
 * its own project.
 */
export async function projectsOf(
  db: Kysely<Database>,
  config: TrellisConfig,
  caller: AuthUser,
): Promise<ProjectRoles[]> {
  const withRoles = ({ id, name }: ProjectRow, roles: readonly Role[]) => ({
    id,
    name,
    roles: [...roles],
  });
  if (caller.apiKey) return [{ ...caller.apiKey.project, roles: [...caller.roles] }];
  if (isInstanceAdmin(config, caller)) {
    const { items } = await projectRepository.list(db);
    return items.map((row) => withRoles(row, everyRole));
  }
  const { defaultProjectName } = projectRepository;
  const memberships = await projectRepository.listMemberships(db, memberNamesOf(caller));
  const defaultRow =
    caller.roles.length > 0
      ? await projectRepository.findByIdOrName(db, defaultProjectName)
      : undefined;
  if (!defaultRow) return memberships.map((row) => withRoles(row, row.roles));
  // Configured users hold their configured roles in `default`, whatever a membership row says.
  return [
    withRoles(defaultRow, caller.roles),
    ...memberships
      .filter((row) => row.name !== defaultProjectName)
      .map((row) => withRoles(row, row.roles)),
  ].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * The project of a request and the caller's roles in it. Configured users hold their configured
 * roles in `default` (the roles of a membership row there when they have none); elsewhere the
 * roles of their membership rows, their groups' included; instance admins every role everywhere;
 * an API key its roles in its own project, and nothing anywhere else. A project where the caller
 * holds nothing is not found, as one that does not exist.
 */
export function createProjectResolver(db: Kysely<Database>, config: TrellisConfig) {
  // `default` cannot be renamed or deleted: read again only for its limits, which may change.
  let defaultProject: Promise<ProjectRow> | undefined;
  let defaultReadAt = 0;
  const findDefault = () => {
    if (Date.now() - defaultReadAt > defaultRefreshMs) {
      defaultProject = undefined;
      defaultReadAt = Date.now();
    }
    return (defaultProject ??= projectRepository
      .findByIdOrName(db, projectRepository.defaultProjectName)
      .then((row) => {
        if (!row) throw new Error('The project "default" is missing; run the migrations.');
        return row;
      })
      .catch((error: unknown) => {
        defaultProject = undefined;
        throw error;
      }));
  };

  async function rolesIn(caller: AuthUser, project: ProjectRow): Promise<Role[] | undefined> {
    // `admin` allows every operation already: a configured admin keeps the roles it has (what
    // `/me` shows, as before projects).
    if (isInstanceAdmin(config, caller)) {
      return caller.roles.includes('admin') ? caller.roles : [...everyRole];
    }
    const member = () => projectRepository.membershipRoles(db, project.id, memberNamesOf(caller));
    if (project.name !== projectRepository.defaultProjectName) return member();
    // Configured users work in `default` as before projects: one without roles is refused (403)
    // by the operation's roles, not told that `default` does not exist. A single sign-on caller
    // (it has groups) without roles from its token is configured nowhere: a member there or not.
    if (caller.roles.length > 0) return caller.roles;
    return (await member()) ?? (caller.groups ? undefined : []);
  }

  return {
    /**
     * The project named by `key` (id or name; absent: `default`) and the caller as it acts
     * there, with its roles in it, and the limits the project sets; `NotFound` for a project it
     * may not see.
     */
    async resolve(
      caller: AuthUser,
      key: string | undefined,
    ): Promise<{ project: RequestProject; user: AuthUser; limits: ProjectLimits }> {
      if (caller.apiKey) {
        const { project: own, limits } = caller.apiKey;
        if (key !== undefined && key !== own.id && key !== own.name) throw projectNotFound(key);
        return { project: own, user: caller, limits };
      }
      const defaultRow = await findDefault();
      const isDefault = key === undefined || key === defaultRow.id || key === defaultRow.name;
      const row = isDefault ? defaultRow : await projectRepository.findByIdOrName(db, key);
      const roles = row && (await rolesIn(caller, row));
      if (!row || !roles) throw projectNotFound(key ?? defaultRow.name);
      return {
        project: { id: row.id, name: row.name },
        user: { ...caller, roles },
        limits: row.limits,
      };
    },

    /**
     * As `resolve` without a project, but a caller who may not work in `default` (a single
     * sign-on user whose groups are members elsewhere only) works in its first project: `/me`
     * answers there, and so tells a client which projects it may choose.
     */
    async resolveHome(
      caller: AuthUser,
    ): Promise<{ project: RequestProject; user: AuthUser; limits: ProjectLimits }> {
      try {
        return await this.resolve(caller, undefined);
      } catch (error) {
        if (!(error instanceof NotFound)) throw error;
        const [first] = await projectsOf(db, config, caller);
        if (!first) throw error;
        return this.resolve(caller, first.id);
      }
    },

    /**
     * The caller as it acts in instance-wide operations: its configured roles (what `/me`
     * shows), with `admin` for an instance admin named in `Projects.InstanceAdmins`. An API key
     * has no roles there but on `/me`.
     */
    instanceUser(caller: AuthUser, operationId?: string): AuthUser {
      if (caller.apiKey) {
        return apiKeyInstanceOperations.has(operationId ?? '') ? caller : { ...caller, roles: [] };
      }
      if (caller.roles.includes('admin') || !isInstanceAdmin(config, caller)) return caller;
      return { ...caller, roles: ['admin', ...caller.roles] };
    },
  };
}

export type ProjectResolver = ReturnType<typeof createProjectResolver>;
