import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Json } from './closed-objects.js';
import { withLinks } from './openapi-links.js';

type JsonObject = { [key: string]: Json };

/** A document with a `createThing` that links to `getThing` as `links` says. */
function documentLinking(links: Json, target: JsonObject = {}): JsonObject {
  return {
    openapi: '3.1.0',
    components: {
      parameters: { thingId: { name: 'thingId', in: 'path', required: true, schema: {} } },
    },
    paths: {
      '/things': {
        post: {
          operationId: 'createThing',
          'x-links': links,
          responses: { '200': { description: 'Created.' } },
        },
      },
      '/things/{thingId}': {
        get: {
          operationId: 'getThing',
          summary: 'Get a thing',
          parameters: [{ $ref: '#/components/parameters/thingId' }],
          responses: { '200': { description: 'The thing.' } },
          ...target,
        },
      },
    },
  };
}

describe('withLinks', () => {
  it('moves `x-links` to the 200 response, described by the target’s summary', () => {
    const document = withLinks(
      documentLinking({
        getThing: { operationId: 'getThing', parameters: { thingId: '$response.body#/data/id' } },
      }),
    ) as JsonObject;
    const create = (document.paths as JsonObject)['/things'] as JsonObject;
    const post = create.post as JsonObject;
    expect(post['x-links']).toBeUndefined();
    expect((post.responses as JsonObject)['200']).toEqual({
      description: 'Created.',
      links: {
        getThing: {
          operationId: 'getThing',
          parameters: { thingId: '$response.body#/data/id' },
          description: 'Get a thing',
        },
      },
    });
  });

  it('puts the links of an operation that accepts work for later on its 202 response', () => {
    const linking = documentLinking({
      getThing: { operationId: 'getThing', parameters: { thingId: '$response.body#/data/id' } },
    });
    const post = ((linking.paths as JsonObject)['/things'] as JsonObject).post as JsonObject;
    post.responses = { '202': { description: 'Accepted.' } };
    withLinks(linking);
    expect(Object.keys(post.responses['202'] as JsonObject)).toEqual(['description', 'links']);
    post.responses = { '201': { description: 'Created.' } };
    post['x-links'] = { getThing: { operationId: 'getThing', parameters: {} } };
    expect(() => withLinks(linking)).toThrow('createThing: links need a 200 or 202 response');
  });

  it('refuses a link to an operation that does not exist or does not take a parameter', () => {
    expect(() =>
      withLinks(documentLinking({ nope: { operationId: 'nope', parameters: {} } })),
    ).toThrow('createThing → nope: no operation "nope"');
    expect(() =>
      withLinks(
        documentLinking({
          getThing: { operationId: 'getThing', parameters: { thingID: '$response.body#/id' } },
        }),
      ),
    ).toThrow('getThing takes no "thingID"');
    expect(() =>
      withLinks(
        documentLinking({
          getThing: { operationId: 'getThing', parameters: {}, requestBody: '$request.body' },
        }),
      ),
    ).toThrow('getThing takes no body');
  });

  it('refuses a requestBody that is not one runtime expression', () => {
    const linking = (requestBody: Json) =>
      documentLinking(
        { getThing: { operationId: 'getThing', parameters: {}, requestBody } },
        { requestBody: { content: {} } },
      );
    expect(() => withLinks(linking({ name: '$request.body#/name' }))).toThrow(
      'createThing → getThing: requestBody must be one runtime expression',
    );
    expect(() => withLinks(linking('$request.body'))).not.toThrow();
  });
});

describe('the contract’s links', () => {
  const document = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../generated/openapi.json', import.meta.url)), 'utf8'),
  ) as JsonObject;
  const operations = new Map<string, JsonObject>();
  for (const item of Object.values(document.paths as JsonObject)) {
    for (const operation of Object.values(item as JsonObject)) {
      const { operationId } = operation as JsonObject;
      if (typeof operationId === 'string') operations.set(operationId, operation as JsonObject);
    }
  }
  const linksOf = (operationId: string) => {
    const responses = operations.get(operationId)?.responses as JsonObject;
    const success = (responses['200'] ?? responses['202']) as JsonObject;
    return success.links as Record<string, JsonObject>;
  };

  it('leads from everything a client creates to what it can do with it', () => {
    const expected: Record<string, string[]> = {
      addWorkflow: [
        'getWorkflow',
        'updateWorkflow',
        'deleteWorkflow',
        'executeWorkflow',
        'listExecutions',
        'listTriggers',
        'createTrigger',
        'listWorkflowRevisions',
      ],
      executeWorkflow: [
        'getExecution',
        'cancelExecution',
        'rerunExecution',
        'listExecutionLogs',
        'listExecutionTasks',
        'listApprovals',
        'streamExecutionEvents',
      ],
      createTrigger: [
        'getTrigger',
        'updateTrigger',
        'deleteTrigger',
        'backfillTrigger',
        'listUpcomingFirings',
        'deliverWebhook',
      ],
      listWorkflowRevisions: ['getWorkflowRevision', 'executeWorkflow'],
      deliverWebhook: ['getExecution', 'cancelExecution', 'listExecutionTasks'],
      createConfiguration: ['getConfiguration', 'updateConfiguration', 'deleteConfiguration'],
      installPlugin: ['uninstallPlugin'],
      listExecutionTasks: ['getExecutionTask', 'listTaskLogs'],
      listApprovals: ['approveApproval', 'rejectApproval'],
    };
    expected.createWorkflow = expected.addWorkflow!;
    expected.rerunExecution = expected.executeWorkflow!;
    for (const [source, targets] of Object.entries(expected)) {
      expect(Object.keys(linksOf(source)), source).toEqual(targets);
    }
  });

  it('sends a body only as one runtime expression, which OpenAPI 3.1 tools evaluate', () => {
    expect(linksOf('createTrigger').updateTrigger).toEqual({
      operationId: 'updateTrigger',
      parameters: {
        workflowId: '$request.path.workflowId',
        triggerId: '$response.body#/data/triggerId',
      },
      requestBody: '$request.body',
      description: 'Update a trigger',
    });
    for (const operationId of operations.keys()) {
      const responses = operations.get(operationId)?.responses as JsonObject;
      for (const response of Object.values(responses)) {
        for (const link of Object.values(((response as JsonObject).links ?? {}) as JsonObject)) {
          const { requestBody } = link as JsonObject;
          if (requestBody !== undefined) expect(requestBody, operationId).toMatch(/^\$/);
        }
      }
    }
  });

  it('takes a definition as plain JSON text or as the object, and gives it no media type', () => {
    const schemas = (document.components as JsonObject).schemas as JsonObject;
    for (const name of ['WorkflowWrite', 'WorkflowUpdate']) {
      const definition = ((schemas[name] as JsonObject).properties as JsonObject).definition;
      expect(definition, name).toMatchObject({
        allOf: [{ $ref: '#/components/schemas/WorkflowDefinitionInput' }],
      });
    }
    expect(schemas['WorkflowDefinitionInput']).toMatchObject({
      oneOf: [
        { $ref: '#/components/schemas/DefinitionText' },
        { $ref: '#/components/schemas/Definition.WorkflowDefinition' },
      ],
    });
    // oapi-codegen reads a string with a media type as a file, and sends it base64-encoded.
    const texts = [schemas['DefinitionText']];
    for (const name of ['WorkflowDetail', 'WorkflowRevision', 'ExecutionDetail']) {
      texts.push(((schemas[name] as JsonObject).properties as JsonObject).workflow);
    }
    for (const text of texts) {
      expect(text).toMatchObject({ type: 'string' });
      expect(text).not.toHaveProperty('contentMediaType');
    }
    expect(schemas['Definition.WorkflowDefinition']).toMatchObject({
      type: 'object',
      required: ['name', 'tasks'],
    });
  });
});
