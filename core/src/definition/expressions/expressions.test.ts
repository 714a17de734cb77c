import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkExpression, checkTemplate } from './check.js';
import {
  evaluateCondition,
  evaluateExpression,
  ExpressionError,
  resolveValue,
  type ExpressionScope,
} from './evaluate.js';
import { referencedInputs, referencedTasks } from './references.js';

const scope: ExpressionScope = {
  outputs: {
    Fetch: {
      status: 200,
      body: { items: [{ id: 'a' }, { id: 'b' }] },
      headers: { 'content-type': 'json' },
    },
    Count: 3,
    Empty: null,
  },
  variables: { region: 'eu', limit: 10, tags: ['x', 'y'] },
};

describe('resolveValue', () => {
  it("reads the run's inputs with Inputs('name'), an unknown one as null", () => {
    const withInputs = { ...scope, inputs: { region: 'us', count: 2 } };
    expect(resolveValue("$[Inputs('count')]", withInputs)).toBe(2);
    expect(resolveValue("to $[inputs('region')]/$[Inputs('none')]", withInputs)).toBe('to us/');
    expect(resolveValue("$[Inputs('region')]", scope)).toBeNull();
    expect(referencedInputs("$[Inputs('a') + Outputs('B')] $[Inputs('c')]")).toEqual(['a', 'c']);
    expect(referencedTasks("$[Inputs('a') + Outputs('B')]")).toEqual(['B']);
  });

  it('yields the raw value when the string is exactly one expression', () => {
    expect(resolveValue("$[Outputs('Fetch').body]", scope)).toEqual({
      items: [{ id: 'a' }, { id: 'b' }],
    });
    expect(resolveValue("$[Outputs('Count')]", scope)).toBe(3);
    expect(resolveValue("$[ Variables('tags') ]", scope)).toEqual(['x', 'y']);
  });

  it('interpolates text around expressions, objects as JSON and null as nothing', () => {
    expect(resolveValue("reports/$[Variables('region')].json", scope)).toBe('reports/eu.json');
    expect(resolveValue("n=$[Outputs('Count') + 1];", scope)).toBe('n=4;');
    expect(resolveValue("tags: $[Variables('tags')]", scope)).toBe('tags: ["x","y"]');
    expect(resolveValue("[$[Outputs('Missing')]]", scope)).toBe('[]');
    expect(resolveValue("$[Variables('region')]-$[Variables('limit')]", scope)).toBe('eu-10');
  });

  it('resolves deeply through objects and arrays, leaving keys and other values alone', () => {
    const value = {
      "$[Variables('region')]": ["$[Outputs('Fetch').status]", 7, true, null],
      nested: { path: "/$[Variables('region')]" },
    };
    expect(resolveValue(value, scope)).toEqual({
      "$[Variables('region')]": [200, 7, true, null],
      nested: { path: '/eu' },
    });
  });

  it('leaves strings without expressions untouched', () => {
    expect(resolveValue('plain [text] $ and ]', scope)).toBe('plain [text] $ and ]');
  });

  it('reads nested fields and indices, with brackets inside the expression', () => {
    expect(resolveValue("$[Outputs('Fetch').body.items[1].id]", scope)).toBe('b');
    expect(resolveValue("$[Outputs('Fetch').headers['content-type']]", scope)).toBe('json');
    expect(resolveValue("$[Outputs('Fetch')['body']['items'][0]['id']]", scope)).toBe('a');
    expect(resolveValue("$[Outputs('Fetch').body.items.length]", scope)).toBe(2);
    expect(resolveValue("$[Variables('tags')[Outputs('Count') - 2]]", scope)).toBe('y');
  });

  it('evaluates missing outputs, variables and properties to null', () => {
    expect(resolveValue("$[Outputs('Nope')]", scope)).toBeNull();
    expect(resolveValue("$[Outputs('Nope').a.b[3]]", scope)).toBeNull();
    expect(resolveValue("$[Outputs('Fetch').body.items[9].id]", scope)).toBeNull();
    expect(resolveValue("$[Variables('nope')]", scope)).toBeNull();
    expect(resolveValue("$[Outputs('Empty').x]", scope)).toBeNull();
    expect(resolveValue("$[Outputs('Count').x]", scope)).toBeNull();
  });

  it('supports literals, arithmetic, comparison, logic, ternary and ??', () => {
    expect(evaluateExpression("Outputs('Count') * 2 + 1", scope)).toBe(7);
    expect(evaluateExpression('7 % 4', scope)).toBe(3);
    expect(evaluateExpression("-Outputs('Count')", scope)).toBe(-3);
    expect(evaluateExpression("Outputs('Count') >= 3 ? 'big' : 'small'", scope)).toBe('big');
    expect(evaluateExpression("Outputs('Nope') ?? 'fallback'", scope)).toBe('fallback');
    expect(evaluateExpression("Outputs('Nope') && Outputs('Nope').x", scope)).toBeNull();
    expect(evaluateExpression("'a' + 1", scope)).toBe('a1');
    expect(evaluateExpression('null', scope)).toBeNull();
    expect(evaluateExpression("[1, 'two'] == [1, 'two']", scope)).toBe(true);
  });

  it('matches Outputs and Variables case-insensitively', () => {
    expect(evaluateExpression("outputs('Count') + VARIABLES('limit')", scope)).toBe(13);
  });

  it('throws an ExpressionError naming the expression on a type error', () => {
    expect(() => resolveValue("$[Outputs('Fetch') * 2]", scope)).toThrow(ExpressionError);
    expect(() => resolveValue("$[Outputs('Fetch') * 2]", scope)).toThrow(
      "operator * needs numbers, not an object and the number 2 in $[Outputs('Fetch') * 2]",
    );
    expect(() => evaluateExpression("Outputs('Nope') < 3", scope)).toThrow(
      /cannot compare null < the number 3/,
    );
    expect(() => evaluateExpression("Outputs('Count') / 0", scope)).toThrow(/division by zero/);
    expect(() => evaluateExpression("Variables('tags')[Outputs('Fetch')]", scope)).toThrow(
      /cannot index with an object/,
    );
  });
});

describe('evaluateCondition', () => {
  it('accepts conditions with or without the $[ ] wrapper', () => {
    expect(evaluateCondition("Outputs('Fetch').status == 200", scope)).toBe(true);
    expect(evaluateCondition("$[Outputs('Fetch').status == 200]", scope)).toBe(true);
    expect(evaluateCondition("  $[Outputs('Fetch').status != 200]  ", scope)).toBe(false);
  });

  it('uses truthiness and treats missing values as false', () => {
    expect(evaluateCondition("Outputs('Missing').ok", scope)).toBe(false);
    expect(evaluateCondition("!Outputs('Missing')", scope)).toBe(true);
    expect(evaluateCondition("Variables('region') == 'eu' && Outputs('Count') > 2", scope)).toBe(
      true,
    );
    expect(evaluateCondition("Variables('region') == 'us' || false", scope)).toBe(false);
  });

  it('compares strictly, without coercion', () => {
    expect(evaluateCondition("Outputs('Count') == '3'", scope)).toBe(false);
    expect(evaluateCondition("Outputs('Count') === 3", scope)).toBe(true);
  });

  it('rejects a condition made of several $[ ] parts', () => {
    expect(() => evaluateCondition('$[true] && $[false]', scope)).toThrow(ExpressionError);
  });
});

describe('safety', () => {
  it('refuses prototype properties statically', () => {
    expect(checkExpression("Outputs('Fetch').constructor")).toMatch(
      /'constructor' is not accessible/,
    );
    expect(checkExpression("Outputs('Fetch').__proto__")).toMatch(/'__proto__' is not accessible/);
    expect(checkExpression("Outputs('Fetch')['prototype']")).toMatch(
      /'prototype' is not accessible/,
    );
    expect(() => evaluateExpression("Outputs('Fetch').constructor", scope)).toThrow(
      ExpressionError,
    );
  });

  it('refuses prototype properties reached through computed keys', () => {
    const tricky = { outputs: { A: { key: 'constructor' } }, variables: {} };
    expect(checkExpression("Outputs('A')[Outputs('A').key]")).toBeNull();
    expect(() => evaluateExpression("Outputs('A')[Outputs('A').key]", tricky)).toThrow(
      /'constructor' is not accessible/,
    );
  });

  it('reads only own properties, never inherited ones', () => {
    expect(evaluateExpression("Outputs('Fetch').toString", scope)).toBeNull();
    expect(evaluateExpression("Outputs('Fetch').hasOwnProperty", scope)).toBeNull();
    expect(evaluateExpression("Outputs('toString')", scope)).toBeNull();
    expect(evaluateExpression("Variables('tags').map", scope)).toBeNull();
  });

  it('has no access to globals, calls or assignments', () => {
    expect(checkExpression('process')).toMatch(/unknown name 'process'/);
    expect(checkExpression('globalThis.process.exit()')).toMatch(
      /only Outputs\('Task'\), Inputs\('name'\), Variables\('key'\), Approval\('Task'\), Item\(\) and Index\(\) can be called/,
    );
    expect(checkExpression("Outputs('A').toString()")).toMatch(/can be called/);
    expect(checkExpression('this')).toMatch(/'this' is not supported/);
    expect(checkExpression('a = 1')).not.toBeNull();
    expect(checkExpression('1, 2')).toMatch(/only one expression/);
    expect(checkExpression('1 | 2')).toMatch(/operator \| is not supported/);
    expect(() => evaluateExpression('constructor', scope)).toThrow(ExpressionError);
  });

  it('requires a quoted name in Outputs and Variables', () => {
    expect(checkExpression("Outputs(Variables('x'))")).toMatch(/takes one quoted name/);
    expect(checkExpression('Outputs()')).toMatch(/takes one quoted name/);
    expect(checkExpression("Outputs('a', 'b')")).toMatch(/takes one quoted name/);
    expect(checkExpression('Outputs')).toMatch(/must be called/);
  });
});

describe('checkExpression and checkTemplate', () => {
  it('accepts valid expressions', () => {
    expect(checkExpression("Outputs('Fetch').status == 200")).toBeNull();
    expect(checkExpression("$[Outputs('Fetch').status == 200]")).toBeNull();
    expect(checkTemplate("a/$[Variables('r')]/$[Outputs('X').list[0]]")).toBeNull();
    expect(checkTemplate('no expressions')).toBeNull();
  });

  it('reports syntax errors with the expression', () => {
    expect(checkExpression("Outputs('Fetch').status ==")).toMatch(
      /^cannot parse \$\[Outputs\('Fetch'\)\.status ==\]/,
    );
    expect(checkTemplate("x $[Outputs('A'] y")).toMatch(/cannot parse/);
    expect(checkTemplate("x $[Outputs('A')")).toMatch(/unterminated \$\[ at character 2/);
    expect(checkTemplate('x $[ ] y')).toMatch(/empty \$\[ \]/);
  });
});

describe('referencedTasks', () => {
  it('lists the tasks read through Outputs in conditions and templates', () => {
    expect(referencedTasks("Outputs('A').x == Outputs('B')[0] && Variables('v')")).toEqual([
      'A',
      'B',
    ]);
    expect(referencedTasks("$[outputs('A')] and $[Outputs('C').y ? Outputs('A') : 1]")).toEqual([
      'A',
      'C',
    ]);
    expect(referencedTasks('plain')).toEqual([]);
    expect(referencedTasks("$[Outputs('A'")).toEqual([]);
  });
});

describe('arbitrary expressions', () => {
  it('either evaluate or fail with an ExpressionError, never anything else', () => {
    const pieces = fc.constantFrom(
      ...[
        "Outputs('Fetch')",
        "Variables('tags')",
        '.body',
        '.items',
        '[0]',
        '[1]',
        "['id']",
        '.constructor',
      ],
      ...[
        '+',
        '-',
        '*',
        '/',
        '%',
        '==',
        '<',
        '&&',
        '||',
        '??',
        '!',
        '?',
        ':',
        '(',
        ')',
        '1',
        "'s'",
        'null',
      ],
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), fc.string(), (tokens, noise) => {
        for (const text of [tokens.join(' '), tokens.join(''), noise]) {
          expect(typeof (checkExpression(text) ?? '')).toBe('string');
          expect(typeof (checkTemplate(`x$[${text}]`) ?? '')).toBe('string');
          expect(Array.isArray(referencedTasks(text))).toBe(true);
          try {
            resolveValue(`$[${text}]`, scope);
            evaluateCondition(text, scope);
          } catch (error) {
            expect(error).toBeInstanceOf(ExpressionError);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('bounds', () => {
  // 2,000,000 characters: the size of the largest output a task may return (Plugins.MaxOutputBytes).
  const text = 'x'.repeat(2_000_000);
  const numbers = Array.from({ length: 1_000_000 }, (_, i) => i % 10);
  const big: ExpressionScope = {
    outputs: { Text: text, Numbers: numbers, Again: [...numbers] },
    variables: {},
  };

  it('refuses parameters that would resolve to more than 16 MiB, before building them', () => {
    expect(() => resolveValue(Array(50_000).fill("$[Outputs('Numbers')]"), big)).toThrow(
      new ExpressionError(
        'the parameters',
        'the parameters would resolve to more than 16 MiB of values',
      ),
    );
    expect(() =>
      resolveValue({ text: Array(10).fill("$[Outputs('Text')]").join(' ') }, big),
    ).toThrow(/^the parameters would resolve to more than 16 MiB of values$/);
    expect(() => resolveValue(`$[${Array(10).fill("Outputs('Text')").join(' + ')}]`, big)).toThrow(
      /would resolve to more than 16 MiB/,
    );
    expect(resolveValue(["$[Outputs('Numbers')]", "$[Outputs('Text')]"], big)).toEqual([
      numbers,
      text,
    ]);
  });

  it('refuses an expression that would take more than ten million steps', () => {
    const comparisons = Array(20).fill("Outputs('Numbers') == Outputs('Again')").join(' && ');
    expect(() => evaluateCondition(comparisons, big)).toThrow(
      /would take more than 10000000 evaluation steps/,
    );
    expect(evaluateCondition("Outputs('Numbers') == Outputs('Again')", big)).toBe(true);
  });

  it('reports values and expressions nested past the stack as expression errors', () => {
    let deep: unknown = 1;
    let alike: unknown = 1;
    for (let i = 0; i < 100_000; i++) [deep, alike] = [[deep], [alike]];
    const nested: ExpressionScope = { outputs: { A: deep, B: alike }, variables: {} };
    expect(() => evaluateCondition("Outputs('A') == Outputs('B')", nested)).toThrow(
      /cannot be evaluated: its values or expressions are nested too deeply or too large/,
    );
    expect(() => resolveValue("deep: $[Outputs('A')]", nested)).toThrow(ExpressionError);
    const long = Array(50_000).fill("Outputs('A')").join('+');
    expect(checkTemplate(`$[${long}]`)).toMatch(/nests \d+ levels deep, over the limit of 1000/);
    expect(() => resolveValue(`$[${long}]`, nested)).toThrow(ExpressionError);
  });
});
