import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `Tests: N passed, N failed, N skipped`, after vitest's own
 * summary. Tools that read a CI log for how many tests ran know that line in any language, and
 * not vitest's table. A file that failed outside its tests (it could not be loaded, a `beforeAll`
 * or `afterAll` hook failed) counts as one failure, and so does each unhandled error: the line
 * never says 0 failed when vitest says the run failed.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<unknown>,
  ): void {
    const counts = { passed: 0, failed: unhandledErrors.length, skipped: 0 };
    for (const testModule of testModules) {
      let failedTests = 0;
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') failedTests++;
        else counts.skipped++;
      }
      counts.failed += failedTests;
      if (failedTests === 0 && testModule.state() === 'failed') counts.failed++;
    }
    process.stdout.write(
      `\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
    );
  }
}
