import { InvalidArgumentError, type Command } from 'commander';
import type { components, TrellisClient } from '@trellis/sdk';
import { isId } from '@trellis/sdk/mcp';
import { CliError } from '../failures.js';
import { time } from '../output/format.js';
import { table } from '../output/table.js';
import type { Act } from './act.js';

type Role = components['schemas']['Role'];
const roles: readonly Role[] = ['admin', 'config', 'plugins', 'workflow'];

/** Collects repeated `--role` values. */
function addRole(text: string, given: Role[] = []): Role[] {
  const role = roles.find((known) => known === text);
  if (!role) throw new InvalidArgumentError(`Give one of ${roles.join(', ')}.`);
  return [...given, role];
}

/** The project the keys commands work on: `--project`, else `default`, where users start. */
const projectOf = (project: string | undefined) => ({ projectId: project ?? 'default' });

/** A key's id from its id or the name of a live key of the project. */
async function keyIdOf(trellis: TrellisClient, projectId: string, key: string): Promise<string> {
  if (isId(key)) return key;
  const keys = await trellis.GET('/projects/{projectId}/keys', { params: { path: { projectId } } });
  const live = keys.find((candidate) => candidate.name === key && candidate.revokedAt === null);
  if (live) return live.id;
  throw new CliError(
    `Project "${projectId}" has no live API key named "${key}".`,
    'trellis keys list shows its keys; give a name or an id.',
  );
}

/** `trellis keys create|list|revoke`: a project's API keys (role admin in the project). */
export function keyCommands(program: Command, act: Act): void {
  const keys = program
    .command('keys')
    .description('API keys of a project (--project; default: default), for service accounts');

  keys
    .command('create')
    .description('create a key and print it: it is shown only this once')
    .argument('<name>', 'unique among the project\u2019s live keys')
    .requiredOption('--role <role>', `a role of the key (${roles.join(', ')}); repeatable`, addRole)
    .option('--expires <time>', 'when it stops working (ISO 8601); default never')
    .action(
      act<[string], { role: Role[]; expires?: string }>(
        async ({ trellis, output, project }, [name], { role, expires }) => {
          const created = await trellis.POST('/projects/{projectId}/keys', {
            params: { path: projectOf(project) },
            body: { name, roles: role, ...(expires === undefined ? {} : { expiresAt: expires }) },
          });
          output.data(created);
          output.line(created.key);
          output.note(
            `API key "${created.name}" (${created.id}) was created with the roles ${created.roles.join(', ')}. Store it now: it is shown only this once.`,
          );
        },
      ),
    );

  keys
    .command('list')
    .alias('ls')
    .description('list the project\u2019s keys, newest first (never their secrets)')
    .action(
      act(async ({ trellis, output, project }) => {
        const listed = await trellis.GET('/projects/{projectId}/keys', {
          params: { path: projectOf(project) },
        });
        output.data(listed);
        if (listed.length === 0) return output.line('No API keys.');
        const rows = listed.map((key) => [
          key.id,
          key.name,
          key.prefix,
          key.roles.join(','),
          key.createdBy,
          key.expiresAt === null ? 'never' : time(key.expiresAt),
          key.lastUsedAt === null ? 'never' : time(key.lastUsedAt),
          key.revokedAt === null ? 'live' : `revoked ${time(key.revokedAt)}`,
        ]);
        const head = [
          'ID',
          'NAME',
          'PREFIX',
          'ROLES',
          'CREATED BY',
          'EXPIRES',
          'LAST USED',
          'STATE',
        ];
        output.line(table(output.colors, head, rows));
      }),
    );

  keys
    .command('revoke')
    .description('revoke a key: refused from the next request on')
    .argument('<key>', 'its id or name')
    .action(
      act<[string]>(async ({ trellis, output, project }, [key]) => {
        const { projectId } = projectOf(project);
        const keyId = await keyIdOf(trellis, projectId, key);
        const answer = await trellis.envelope.DELETE('/projects/{projectId}/keys/{keyId}', {
          params: { path: { projectId, keyId } },
        });
        output.data(answer.data);
        for (const message of answer.messages) output.line(message);
      }),
    );
}
