import { describe, expect, it } from 'vitest';
import { junitXml } from './junit.js';

describe('junitXml', () => {
  it('writes a suite per workflow, a case per test, failures and skips with their reasons, escaped', () => {
    expect(
      junitXml([
        {
          name: 'Orders & "returns"',
          cases: [
            { name: 'adds', time: 0.5 },
            {
              name: 'a <b>',
              time: 1.25,
              failures: ['outputs.total: expected 11, got 10', 'bell \u0007 gone'],
              output: 'Dry run: execution 1.',
            },
          ],
        },
        { name: 'New', cases: [{ name: 'later', time: 0, skipped: 'not stored yet' }] },
      ]),
    ).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="trellis test" tests="3" failures="1" errors="0" skipped="1" time="1.750">',
        '  <testsuite name="Orders &amp; &quot;returns&quot;" tests="2" failures="1" errors="0" skipped="0" time="1.750">',
        '    <testcase name="adds" classname="Orders &amp; &quot;returns&quot;" time="0.500"/>',
        '    <testcase name="a &lt;b&gt;" classname="Orders &amp; &quot;returns&quot;" time="1.250">',
        '      <failure message="outputs.total: expected 11, got 10; bell  gone" type="WorkflowTestFailure">outputs.total: expected 11, got 10',
        'bell  gone</failure>',
        '      <system-out>Dry run: execution 1.</system-out>',
        '    </testcase>',
        '  </testsuite>',
        '  <testsuite name="New" tests="1" failures="0" errors="0" skipped="1" time="0.000">',
        '    <testcase name="later" classname="New" time="0.000">',
        '      <skipped message="not stored yet"/>',
        '    </testcase>',
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    );
  });
});
