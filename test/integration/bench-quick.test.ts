/**
 * Issue 13: `npm run bench -- --quick` as a smoke check. The quick bench
 * runs end to end (every scenario, tiny sizes, control planes of its own)
 * with --out into a temp dir; every headline row must be there with its
 * reference and ratio fields, and the committed docs/benchmarks.md,
 * bench/results.json and README.md must be left alone. No timing is
 * asserted: the figures of a smoke run on a shared machine mean nothing.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_SCENARIOS } from '../../bench/config.js';
import { parseResults, renderSummary, SUMMARY_END, SUMMARY_START, type BenchResults } from '../../bench/results.js';
import { repoRoot } from '../../src/api/crd-paths.js';

/** Every headline row of a full run, by id; true where the row compares with a reference (and so carries a ratio). */
const ROWS: Record<string, boolean> = {
  'gc-background-equal-budget': true,
  'gc-background-equal-flag': true,
  'gc-foreground-equal-budget': true,
  'gc-orphan-equal-budget': true,
  'gc-unthrottled-default-workers': true,
  'gc-unthrottled-high-workers': true,
  'gc-heap-per-object-10k': false,
  'gc-heap-per-object-real': true,
  'reconciler-one-bundle-vs-raw': true,
  'reconciler-one-bundle-vs-kubectl': true,
  'reconciler-ready': false,
  'reconciler-heap': false,
  'reconciler-noop': false,
  'reconciler-restart': false,
  'sharding-one-shard': false,
  'sharding-2-shards': true,
  'hostile-longest-block': false,
  'hostile-unrelated-heap': true,
  'expiry-p99-late': true,
};

const COMMITTED = ['docs/benchmarks.md', 'bench/results.json', 'README.md'];

let out: string;
let results: BenchResults;
let exitCode: number | null;
let stderrTail: string;
const committedBefore = new Map<string, string>();

beforeAll(async () => {
  const root = repoRoot();
  for (const path of COMMITTED) committedBefore.set(path, readFileSync(join(root, path), 'utf8'));
  out = mkdtempSync(join(tmpdir(), 'bundlesmith-bench-quick-'));
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Every scenario, at the quick sizes: none of the caller's BENCH_* settings.
  for (const key of Object.keys(env)) if (key.startsWith('BENCH_')) delete env[key];
  const child = spawn(process.execPath, [join(root, 'dist', 'bench', 'main.js'), '--quick', '--out', out], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8_000);
  });
  exitCode = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  stderrTail = stderr;
  if (!existsSync(join(out, 'results.json')))
    throw new Error(`the quick bench exited with ${exitCode} and wrote no results.json; its stderr ends:\n${stderrTail}`);
  results = parseResults(readFileSync(join(out, 'results.json'), 'utf8'));
}, 900_000);

afterAll(() => {
  rmSync(out, { recursive: true, force: true });
});

it('completes: exit 0, no scenario failed, every scenario ran', () => {
  expect({ exitCode, failures: results.failures, stderr: exitCode === 0 ? '' : stderrTail }).toEqual({
    exitCode: 0,
    failures: [],
    stderr: '',
  });
  expect(results.quick).toBe(true);
  expect((results.config as { only: string[] }).only).toEqual([...BENCH_SCENARIOS]);
});

it('writes every headline row, each with its reference and ratio fields (a reference and a ratio where the row compares)', () => {
  const byId = new Map(results.figures.map((f) => [f.id, f]));
  expect([...byId.keys()].sort()).toEqual(expect.arrayContaining(Object.keys(ROWS).sort()));
  for (const [id, compared] of Object.entries(ROWS)) {
    const f = byId.get(id);
    expect(f).toHaveProperty('reference');
    expect(f).toHaveProperty('ratio');
    expect(f).toHaveProperty('target');
    expect(f).toHaveProperty('met');
    if (compared)
      expect({ id, reference: typeof f?.reference?.value, ratio: typeof f?.ratio }).toEqual({ id, reference: 'number', ratio: 'number' });
  }
  expect(results.versions.commit).not.toBe('');
  expect(results.machine.cpus).toBeGreaterThan(0);
});

it('writes the Markdown next to the JSON in the --out directory, and leaves the committed benchmarks, results and README alone', () => {
  expect(existsSync(join(out, 'benchmarks.md'))).toBe(true);
  const page = readFileSync(join(out, 'benchmarks.md'), 'utf8');
  expect(page).toContain('## Foreground and orphan cascades');
  // The summary sits under the title, between its markers, rendered from the results written beside it.
  expect(page).toContain(`${SUMMARY_START}\n${renderSummary(results)}\n${SUMMARY_END}`);
  const root = repoRoot();
  for (const path of COMMITTED)
    expect({ path, same: readFileSync(join(root, path), 'utf8') === committedBefore.get(path) }).toEqual({ path, same: true });
});
