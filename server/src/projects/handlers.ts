import { Conflict, Invalid, NotFound } from '#definition/errors.js';
import { isUuid } from '#store/ids.js';
import * as projectRepository from '#store/project-repository.js';
import * as workflowRepository from '#store/workflow-repository.js';
import type { ProjectMemberRow, ProjectRow } from '#store/tables.js';
import type { AppDeps, HandlerMap } from '../handler.js';
import { confirmation } from '../handler.js';
import { listReply, pageInMemory, requestedPage } from '../lists.js';
import { callerOf, type Req } from '../request-context.js';
import {
  isInstanceAdmin,
  memberNamesOf,
  projectNotFound,
  requireInstanceAdmin,
  type RequestProject,
} from './request-project.js';

function toProject(row: ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
    limits: row.limits,
    ...(row.allowedPlugins === null ? {} : { allowedPlugins: row.allowedPlugins }),
  };
}

function toMember(row: ProjectMemberRow) {
  return { name: row.name, roles: row.roles };
}

/** 403 unless the caller is an instance admin: only they create, rename and delete projects. */
function assertInstanceAdmin(deps: AppDeps, req: Req): void {
  requireInstanceAdmin(deps.config, callerOf(req), 'create, rename or delete projects');
}

/** A name as projects take it; a UUID would be read as some project's id wherever it is used. */
function assertUsableName(name: string): void {
  if (isUuid(name)) {
    throw new Invalid({
      code: 'validation.invalid',
      path: 'body.name',
      message: 'must not be a UUID (a project is named by its id or its name).',
    });
  }
}

/** 409 for `default`, which holds what existed before projects and is where users start. */
function assertNotDefault(project: RequestProject, change: string): void {
  if (project.name !== projectRepository.defaultProjectName) return;
  throw new Conflict(`The project "default" cannot be ${change}.`, { code: 'conflict' });
}

async function findRow(deps: AppDeps, project: RequestProject): Promise<ProjectRow> {
  const row = await projectRepository.findByIdOrName(deps.db, project.id);
  if (!row) throw projectNotFound(project.id);
  return row;
}

const memberNotFound = (project: RequestProject, name: string) =>
  new NotFound(`"${name}" is not a member of project "${project.name}".`, {
    code: 'member.not_found',
  });

/** `/projects`: projects and their members. */
export const projectHandlers = {
  listProjects: async ({ deps, req, project, query }) => {
    const caller = callerOf(req);
    // An API key works in its own project, the request's, and in no other.
    if (caller.apiKey)
      return listReply(pageInMemory([await findRow(deps, project)], query), query, toProject);
    const page = requestedPage(query);
    const paged = isInstanceAdmin(deps.config, caller)
      ? await projectRepository.list(deps.db, page)
      : await projectRepository.listForMember(
          deps.db,
          memberNamesOf(caller),
          caller.roles.length > 0,
          page,
        );
    return listReply(paged, query, toProject);
  },

  createProject: async ({ deps, req, body }) => {
    assertInstanceAdmin(deps, req);
    assertUsableName(body.name);
    const row = await deps.db.transaction().execute(async (trx) => {
      const created = await projectRepository.insert(trx, body.name, body.limits);
      await projectRepository.setAllowedPlugins(trx, created.id, body.allowedPlugins ?? null);
      return created;
    });
    return {
      data: { id: row.id, name: row.name },
      messages: [`Project "${row.name}" was created.`],
    };
  },

  getProject: async ({ deps, project }) => ({ data: toProject(await findRow(deps, project)) }),

  updateProject: async ({ deps, req, project, body }) => {
    assertInstanceAdmin(deps, req);
    assertUsableName(body.name);
    if (body.name !== project.name) assertNotDefault(project, 'renamed');
    const row = await deps.db.transaction().execute(async (trx) => {
      if (body.allowedPlugins !== undefined) {
        await projectRepository.setAllowedPlugins(trx, project.id, body.allowedPlugins);
      }
      return projectRepository.update(trx, project.id, body);
    });
    if (!row) throw projectNotFound(project.id);
    return confirmation(`Project "${row.name}" was updated.`);
  },

  deleteProject: async ({ deps, req, project }) => {
    assertInstanceAdmin(deps, req);
    assertNotDefault(project, 'deleted');
    // A new workflow's test runs are no workflow of the project's: they go with it.
    await workflowRepository.removeEndedDrafts(deps.db, project.id, { all: true });
    await projectRepository.remove(deps.db, await findRow(deps, project));
    return confirmation(`Project "${project.name}" was deleted.`);
  },

  listProjectMembers: async ({ deps, project, query }) =>
    listReply(
      await projectRepository.listMembers(deps.db, project.id, requestedPage(query)),
      query,
      toMember,
    ),

  getProjectMember: async ({ deps, project, params }) => {
    const row = await projectRepository.findMember(deps.db, project.id, params.name);
    if (!row) throw memberNotFound(project, params.name);
    return { data: toMember(row) };
  },

  putProjectMember: async ({ deps, project, params, body }) => {
    const row = await projectRepository.putMember(deps.db, project.id, params.name, body.roles);
    return {
      data: toMember(row),
      messages: [`"${row.name}" is a member of project "${project.name}".`],
    };
  },

  deleteProjectMember: async ({ deps, project, params }) => {
    if (!(await projectRepository.removeMember(deps.db, project.id, params.name))) {
      throw memberNotFound(project, params.name);
    }
    return confirmation(`"${params.name}" is no longer a member of project "${project.name}".`);
  },
} satisfies Partial<HandlerMap>;
