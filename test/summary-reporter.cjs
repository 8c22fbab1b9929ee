// Prints the closing line CI reads: "tests: N passed, N failed".
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.stdout.write(`tests: ${results.numPassedTests} passed, ${failed} failed\n`);
  }
}
module.exports = SummaryReporter;
