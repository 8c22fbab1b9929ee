/**
 * `npm run bench:summary [-- RESULTS_JSON]`: rewrites the benchmark summary
 * at the top of docs/benchmarks.md (between its markers) from
 * bench/results.json, or from the file given. A full `npm run bench` writes
 * it too; this is for a results.json edited, merged or copied from another
 * machine.
 */
import { join, resolve } from 'node:path';
import { repoRoot } from '../src/api/crd-paths.js';
import { regenerateSummary } from './results.js';

const root = repoRoot();
const resultsPath = process.argv[2] ? resolve(process.argv[2]) : join(root, 'bench', 'results.json');
try {
  const changed = regenerateSummary(resultsPath, join(root, 'docs', 'benchmarks.md'));
  process.stderr.write(`${changed ? 'rewrote' : 'unchanged:'} the summary in docs/benchmarks.md from ${resultsPath}\n`);
} catch (err) {
  process.stderr.write(`bench:summary: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
