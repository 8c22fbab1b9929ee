/**
 * `npm run bench:readme [-- RESULTS_JSON]`: rewrites the README's benchmark
 * summary (between its markers) from bench/results.json, or from the file
 * given. A full `npm run bench` does the same at its end; this is for a
 * results.json edited, merged or copied from another machine.
 */
import { join, resolve } from 'node:path';
import { repoRoot } from '../src/api/crd-paths.js';
import { regenerateReadme } from './results.js';

const root = repoRoot();
const resultsPath = process.argv[2] ? resolve(process.argv[2]) : join(root, 'bench', 'results.json');
try {
  const changed = regenerateReadme(resultsPath, join(root, 'README.md'));
  process.stderr.write(`${changed ? 'rewrote' : 'unchanged:'} the README summary from ${resultsPath}\n`);
} catch (err) {
  process.stderr.write(`bench:readme: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
