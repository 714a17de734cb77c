import { projectAttributes } from '#protocol/execution-run.js';
import type { ChildProject } from '../activities/child-project.js';
import type { RunVersion } from './run-version.js';

/**
 * What a child of this run shows of its project (the `child-project` patch): its search
 * attributes and its details' project. Nothing when the activity that prepared the child said
 * no project (histories from before).
 */
export function childProject(project: ChildProject | undefined, version: RunVersion) {
  if (project === undefined || !version.has('childProject')) {
    return { attributes: [], details: {} };
  }
  return {
    attributes: projectAttributes(project.attribute ? project.name : undefined),
    details: { project: project.name },
  };
}
