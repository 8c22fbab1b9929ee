// Prints the closing line CI reads: "tests: N passed, N failed". With
// BUNDLESMITH_TEST_DURATIONS set (the lane runner, hack/test-lanes.ts, sets
// it), also writes each test file's run time there as JSON, so the runner
// can report the slowest files and balance the next run's lanes.
const { writeFileSync } = require('node:fs');
const { relative } = require('node:path');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const out = process.env.BUNDLESMITH_TEST_DURATIONS;
    if (out) {
      const seconds = {};
      for (const file of results.testResults) {
        const ms = file.perfStats.runtime ?? file.perfStats.end - file.perfStats.start;
        seconds[relative(process.cwd(), file.testFilePath)] = Math.round(ms / 100) / 10;
      }
      writeFileSync(out, JSON.stringify({ passed: results.numPassedTests, failed, seconds }));
    }
    process.stdout.write(`tests: ${results.numPassedTests} passed, ${failed} failed\n`);
  }
}
module.exports = SummaryReporter;
