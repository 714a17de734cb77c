/** The tables of projects and who may work in them. */
import type { ColumnType, Selectable } from 'kysely';
import type { Role } from '#platform/config/types.js';
import type { CreatedAt, Json } from './columns.js';

/** A project: it owns workflows (and all that hangs off them) and plugin configurations. */
export interface ProjectTable {
  id: string;
  /** Unique; `default` holds what existed before projects. */
  name: string;
  createdAt: CreatedAt;
  /** The limits it sets; a limit left out is the instance's default (`Projects.Limits`). */
  limits: ColumnType<ProjectLimits, string | undefined, string>;
  /** The plugin types its workflows may use; null: every installed plugin. */
  allowedPlugins: Json<string[]> | null;
}

/** A project's fair share: each limit a whole number, 0 unlimited (issue 29). */
export interface ProjectLimits {
  /** Executions Running or Paused at once. */
  runningExecutions?: number;
  /** Executions started in any minute. */
  startsPerMinute?: number;
  /** API requests in any minute, across API processes. */
  requestsPerMinute?: number;
}

/**
 * A project's API requests (`project_request_rate`): the count of the minute that started at
 * `windowStart` and of the minute before it.
 */
export interface ProjectRequestRateTable {
  projectId: string;
  windowStart: Date;
  count: number;
  previousCount: number;
}

/** A member of a project: a user name or OpenID Connect subject, with its roles there. */
export interface ProjectMemberTable {
  projectId: string;
  name: string;
  roles: Json<Role[]>;
  createdAt: CreatedAt;
}

/**
 * The project a row belongs to: written once, when the row is made (a row written without one
 * lands in `default`).
 */
export type ProjectIdColumn = ColumnType<string, string | undefined, never>;

export type ProjectRow = Selectable<ProjectTable>;
export type ProjectMemberRow = Selectable<ProjectMemberTable>;
