import type { Command } from 'commander';
import { readableDefinition, workflowIdOf } from '@trellis/sdk/mcp';
import { readText } from '../inputs.js';
import { time } from '../output/format.js';
import { table } from '../output/table.js';
import type { Act } from './act.js';

/** `trellis workflows list|show|add|update|delete`. */
export function workflowCommands(program: Command, act: Act): void {
  const workflows = program
    .command('workflows')
    .alias('workflow')
    .description('stored workflows: list, show, add, update, delete');

  workflows
    .command('list')
    .alias('ls')
    .description('list the stored workflows')
    .action(
      act(async ({ trellis, output }) => {
        const items = [];
        for await (const item of trellis.all('/workflows', {
          params: { query: { pageSize: 1000 } },
        })) {
          items.push(item);
        }
        output.data(items);
        if (items.length === 0) {
          output.line('No workflows yet: add one with trellis workflows add -f <file>.');
          return;
        }
        const rows = items.map((item) => [item.id, item.name, time(item.modifiedDate)]);
        output.line(table(output.colors, ['ID', 'NAME', 'MODIFIED'], rows));
      }),
    );

  workflows
    .command('show')
    .description('print a workflow\u2019s definition (ready to edit and update with -f)')
    .argument('<workflow>', 'its name or id')
    .action(
      act<[string]>(async ({ trellis, output }, [workflow]) => {
        const workflowId = await workflowIdOf(trellis, workflow);
        const detail = await trellis.GET('/workflows/{workflowId}', {
          params: { path: { workflowId } },
        });
        output.data(detail);
        output.line(readableDefinition(detail.workflow));
      }),
    );

  workflows
    .command('add')
    .description('add a workflow from its definition (JSON)')
    .requiredOption('-f, --file <file>', 'the definition file; - reads standard input')
    .action(
      act<[], { file: string }>(async ({ trellis, output }, _args, { file }) => {
        const definition = await readText(file);
        const added = await trellis.envelope.POST('/workflows/Add', { body: { definition } });
        output.data({ ...added.data, messages: added.messages });
        for (const message of added.messages) output.line(message);
        output.line(`id ${added.data.id}`);
      }),
    );

  workflows
    .command('update')
    .description('replace a workflow\u2019s definition')
    .argument('<workflow>', 'its name or id')
    .requiredOption('-f, --file <file>', 'the new definition file; - reads standard input')
    .option(
      '--accept-breaking',
      'store it even when it breaks the declared inputs or outputs for their callers',
    )
    .action(
      act<[string], { file: string; acceptBreaking?: boolean }>(
        async ({ trellis, output }, [workflow], { file, acceptBreaking }) => {
          const definition = await readText(file);
          const workflowId = await workflowIdOf(trellis, workflow);
          const updated = await trellis.envelope.PUT('/workflows/{workflowId}', {
            params: {
              path: { workflowId },
              ...(acceptBreaking === true ? { query: { acceptBreaking } } : {}),
            },
            body: { workflowId, definition },
          });
          output.data({ id: workflowId, messages: updated.messages });
          for (const message of updated.messages) output.line(message);
        },
      ),
    );

  workflows
    .command('delete')
    .alias('rm')
    .description('delete a workflow')
    .argument('<workflow>', 'its name or id')
    .action(
      act<[string]>(async ({ trellis, output }, [workflow]) => {
        const workflowId = await workflowIdOf(trellis, workflow);
        const deleted = await trellis.envelope.DELETE('/workflows/{workflowId}', {
          params: { path: { workflowId } },
        });
        output.data({ id: workflowId, messages: deleted.messages });
        for (const message of deleted.messages) output.line(message);
      }),
    );
}
