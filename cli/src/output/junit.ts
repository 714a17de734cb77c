/**
 * Test results as JUnit XML, the form CI systems read (GitLab, Jenkins, GitHub's test reporters):
 * one `<testsuite>` per workflow, one `<testcase>` per case, a `<failure>` with its reasons or a
 * `<skipped>` with why it did not run.
 */

/** One case of a suite as the report shows it. */
export interface JunitCase {
  name: string;
  /** Seconds. */
  time: number;
  /** Why it failed (one line each); absent when it passed. */
  failures?: string[];
  /** Why it did not run; absent when it ran. */
  skipped?: string;
  /** More for a person: the dry run to open. */
  output?: string;
}

export interface JunitSuite {
  name: string;
  cases: JunitCase[];
}

/** The XML document of the suites. */
export function junitXml(suites: readonly JunitSuite[]): string {
  const all = suites.flatMap((suite) => suite.cases);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="trellis test"${counts(all)}>`,
  ];
  for (const suite of suites) {
    lines.push(`  <testsuite name="${attribute(suite.name)}"${counts(suite.cases)}>`);
    for (const testCase of suite.cases) lines.push(...caseXml(suite.name, testCase));
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

function counts(cases: readonly JunitCase[]): string {
  const failures = cases.filter((each) => each.failures !== undefined).length;
  const skipped = cases.filter((each) => each.skipped !== undefined).length;
  const time = cases.reduce((sum, each) => sum + each.time, 0);
  return ` tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds(time)}"`;
}

function caseXml(suite: string, testCase: JunitCase): string[] {
  const open = `    <testcase name="${attribute(testCase.name)}" classname="${attribute(suite)}" time="${seconds(testCase.time)}"`;
  const body: string[] = [];
  if (testCase.failures !== undefined) {
    const message = testCase.failures.join('; ');
    body.push(
      `      <failure message="${attribute(message)}" type="WorkflowTestFailure">${text(testCase.failures.join('\n'))}</failure>`,
    );
  }
  if (testCase.skipped !== undefined) {
    body.push(`      <skipped message="${attribute(testCase.skipped)}"/>`);
  }
  if (testCase.output !== undefined) {
    body.push(`      <system-out>${text(testCase.output)}</system-out>`);
  }
  return body.length === 0 ? [`${open}/>`] : [`${open}>`, ...body, '    </testcase>'];
}

const seconds = (value: number) => value.toFixed(3);

/** Text XML 1.0 can hold: characters it forbids (most control characters) are dropped. */
function text(value: string): string {
  return (
    value
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
      .replaceAll('&', '&amp;')
      .replaceAll('<', '&lt;')
      .replaceAll('>', '&gt;')
  );
}

/** An attribute's value: text, with quotes and line breaks kept as references. */
function attribute(value: string): string {
  return text(value)
    .replaceAll('"', '&quot;')
    .replaceAll('\n', '&#10;')
    .replaceAll('\r', '&#13;')
    .replaceAll('\t', '&#9;');
}
