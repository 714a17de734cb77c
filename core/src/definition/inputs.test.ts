import { describe, expect, it } from 'vitest';
import {
  checkInputDeclarations as checkInputDeclarationsProblems,
  resolveInputs as resolveInputsProblems,
} from './inputs.js';
import type { WorkflowDefinition } from './types.js';
import { renderProblem } from './validation/problem.js';

/** What a user reads of each problem. */
const checkInputDeclarations = (...args: Parameters<typeof checkInputDeclarationsProblems>) =>
  checkInputDeclarationsProblems(...args).map(renderProblem);
const resolveInputs = (...args: Parameters<typeof resolveInputsProblems>) => {
  const result = resolveInputsProblems(...args);
  return result.ok ? result : { ...result, problems: result.problems.map(renderProblem) };
};

const definition: Pick<WorkflowDefinition, 'inputs'> = {
  inputs: {
    region: { type: 'string', required: true },
    count: { type: 'integer', default: 3 },
    dryRun: { type: 'boolean' },
    tags: { type: 'array', required: true, default: [] },
  },
};

describe('resolveInputs', () => {
  it('keeps the given values and fills defaults; optional inputs without one stay absent', () => {
    expect(resolveInputs(definition, { region: 'eu' }, ['body', 'inputs'])).toEqual({
      ok: true,
      inputs: { region: 'eu', count: 3, tags: [] },
    });
    expect(
      resolveInputs(definition, { region: 'eu', count: 5, dryRun: true }, ['body', 'inputs']),
    ).toEqual({ ok: true, inputs: { region: 'eu', count: 5, dryRun: true, tags: [] } });
  });

  it('names every missing, unknown and mistyped input', () => {
    expect(
      resolveInputs(definition, { count: 2.5, dryRun: 'yes', extra: 1 }, ['body', 'inputs']),
    ).toEqual({
      ok: false,
      problems: [
        'body.inputs.count: must be an integer, not the number 2.5',
        'body.inputs.dryRun: must be a boolean, not the string "yes"',
        'body.inputs.extra: is not a declared input (declared: region, count, dryRun, tags)',
        'body.inputs.region: is required (string)',
      ],
    });
  });

  it('suggests the declared input a misspelled one may have meant, as data too', () => {
    expect(resolveInputsProblems(definition, { regoin: 'eu' }, ['body', 'inputs'])).toEqual({
      ok: false,
      problems: [
        {
          code: 'validation.unknown',
          path: 'body.inputs.regoin',
          message:
            "is not a declared input (declared: region, count, dryRun, tags) (did you mean 'region'?)",
          suggestions: ['region'],
        },
        expect.objectContaining({ path: 'body.inputs.region' }),
      ],
    });
  });

  it('refuses any input of a definition that declares none', () => {
    expect(resolveInputs({}, { a: 1 }, ['properties', 'inputs'])).toEqual({
      ok: false,
      problems: ['properties.inputs.a: is not a declared input (the workflow declares none)'],
    });
    expect(resolveInputs({}, undefined, ['body', 'inputs'])).toEqual({ ok: true, inputs: {} });
  });
});

describe('checkInputDeclarations', () => {
  it('rejects a default of the wrong type', () => {
    expect(
      checkInputDeclarations({
        inputs: { n: { type: 'number', default: '1' }, o: { type: 'object', default: null } },
      }),
    ).toEqual([
      'inputs.n.default: must be a number, not the string "1"',
      'inputs.o.default: must be an object, not null',
    ]);
  });
});
