/**
 * `npm test`'s runner: the unit tests and the integration files split into
 * lanes, each lane one jest process with its own control plane (its
 * globalSetup starts one), all lanes at once.
 *
 * Why lanes: integration files run one at a time within a control plane,
 * because controllers and collectors see cluster-wide state, and most of a
 * file's time is waiting for the API server and for delays (the machine is
 * mostly idle meanwhile). One lane took 90 minutes; lanes on control planes
 * of their own keep that isolation and share the machine's idle time.
 *
 * Files go to lanes by their last measured run time
 * (test/integration/durations.json, refreshed from this run's figures with
 * BUNDLESMITH_WRITE_DURATIONS=1), longest first to the least loaded lane.
 * Each lane's output is streamed with a `[lane N]` prefix; the last line is
 * the total, "tests: N passed, N failed", which CI reads.
 *
 * BUNDLESMITH_TEST_LANES sets the number of lanes (default 3). Arguments
 * are substrings of test file paths: only files that contain one run
 * (`npm test -- redteam3 cli`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from '../src/api/crd-paths.js';
import { ensurePromtool, ensureTools } from './tools.js';

const DURATIONS = join(repoRoot(), 'test', 'integration', 'durations.json');
/** A file not measured yet counts as this many seconds. */
const UNMEASURED_SECONDS = 30;
/** The unit project, run by lane 0, counts as this many seconds. */
const UNIT_SECONDS = 60;

interface LaneResult {
  passed: number;
  failed: number;
  seconds: Record<string, number>;
  exitCode: number;
}

function testFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (entry.name.endsWith('.test.ts')) found.push(relative(repoRoot(), path));
  }
  return found.sort();
}

function measured(): Record<string, number> {
  if (!existsSync(DURATIONS)) return {};
  return JSON.parse(readFileSync(DURATIONS, 'utf8')) as Record<string, number>;
}

/** Longest first, each to the lane with the least time so far (lane 0 starts with the unit tests). */
export function assignLanes(files: string[], seconds: Record<string, number>, lanes: number, unitSeconds: number): string[][] {
  const load = Array.from({ length: lanes }, (_, i) => (i === 0 ? unitSeconds : 0));
  const assigned: string[][] = Array.from({ length: lanes }, () => []);
  const weight = (f: string): number => seconds[f] ?? UNMEASURED_SECONDS;
  for (const file of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    let lane = 0;
    for (let i = 1; i < lanes; i++) if (load[i]! < load[lane]!) lane = i;
    assigned[lane]!.push(file);
    load[lane]! += weight(file);
  }
  return assigned;
}

function runLane(index: number, files: string[], unitFiles: string[], work: string): Promise<LaneResult> {
  const durations = join(work, `lane-${index}.json`);
  const args = [
    '--experimental-vm-modules',
    join(repoRoot(), 'node_modules', 'jest', 'bin', 'jest.js'),
    '--runInBand',
    '--selectProjects',
    ...(unitFiles.length > 0 ? ['unit'] : []),
    ...(files.length > 0 ? ['integration'] : []),
    '--runTestsByPath',
    ...unitFiles,
    ...files,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: repoRoot(),
      env: { ...process.env, BUNDLESMITH_TEST_DURATIONS: durations, BUNDLESMITH_TEST_LANE: String(index) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const prefix = `[lane ${index}] `;
    for (const stream of [child.stdout, child.stderr]) {
      let pending = '';
      stream.on('data', (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) process.stdout.write(prefix + line + '\n');
      });
      stream.on('end', () => {
        if (pending !== '') process.stdout.write(prefix + pending + '\n');
      });
    }
    child.on('error', reject);
    child.on('close', (code) => {
      const report = existsSync(durations)
        ? (JSON.parse(readFileSync(durations, 'utf8')) as Omit<LaneResult, 'exitCode'>)
        : { passed: 0, failed: 1, seconds: {} };
      // A lane that died before its reporter ran counts as one failure.
      resolve({ ...report, failed: code !== 0 && report.failed === 0 ? 1 : report.failed, exitCode: code ?? 1 });
    });
  });
}

async function main(): Promise<void> {
  const filters = process.argv.slice(2);
  const chosen = (f: string): boolean => filters.length === 0 || filters.some((part) => f.includes(part));
  const lanes = Math.max(1, Number(process.env.BUNDLESMITH_TEST_LANES ?? '3') || 1);
  // Built (or found cached) once, before the lanes: each build takes both cores, and two lanes must not build into one cache at once.
  await ensureTools();
  await ensurePromtool();
  const allFiles = testFiles(join(repoRoot(), 'test', 'integration'));
  const files = allFiles.filter(chosen);
  const unitFiles = testFiles(join(repoRoot(), 'test', 'unit')).filter(chosen);
  const seconds = measured();
  const assigned = assignLanes(files, seconds, lanes, unitFiles.length > 0 ? UNIT_SECONDS : 0).filter(
    (lane, i) => lane.length > 0 || (i === 0 && unitFiles.length > 0),
  );
  const work = mkdtempSync(join(tmpdir(), 'bundlesmith-lanes-'));
  const started = Date.now();
  for (const [i, lane] of assigned.entries()) {
    const withUnit = i === 0 && unitFiles.length > 0;
    const planned = lane.reduce((s, f) => s + (seconds[f] ?? UNMEASURED_SECONDS), withUnit ? UNIT_SECONDS : 0);
    process.stdout.write(
      `[lanes] lane ${i}: ${lane.length} integration files${withUnit ? ' and the unit tests' : ''}, about ${Math.round(planned)} s\n`,
    );
  }
  const results = await Promise.all(assigned.map((lane, i) => runLane(i, lane, i === 0 ? unitFiles : [], work)));

  const all: Record<string, number> = {};
  for (const r of results) Object.assign(all, r.seconds);
  const slowest = Object.entries(all)
    .filter(([f]) => f.startsWith('test/integration/'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10);
  process.stdout.write(`[lanes] slowest files: ${slowest.map(([f, s]) => `${f.replace('test/integration/', '')} ${s} s`).join(', ')}\n`);
  for (const [i, r] of results.entries())
    process.stdout.write(`[lanes] lane ${i}: ${r.passed} passed, ${r.failed} failed (exit ${r.exitCode})\n`);
  process.stdout.write(`[lanes] all lanes done in ${Math.round((Date.now() - started) / 1000)} s\n`);
  if (process.env.BUNDLESMITH_WRITE_DURATIONS === '1') {
    const integration = Object.fromEntries(
      Object.entries({ ...seconds, ...all })
        .filter(([f]) => f.startsWith('test/integration/') && allFiles.includes(f))
        .sort(([a], [b]) => a.localeCompare(b)),
    );
    writeFileSync(DURATIONS, JSON.stringify(integration, null, 2) + '\n');
  }
  const passed = results.reduce((s, r) => s + r.passed, 0);
  const failed = results.reduce((s, r) => s + r.failed, 0);
  process.stdout.write(`tests: ${passed} passed, ${failed} failed\n`);
  process.exitCode = results.some((r) => r.exitCode !== 0) ? 1 : 0;
}

if (process.argv[1] && process.argv[1].endsWith('test-lanes.js')) {
  main().catch((err: unknown) => {
    process.stdout.write(`[lanes] ${err instanceof Error ? err.message : String(err)}\ntests: 0 passed, 1 failed\n`);
    process.exitCode = 1;
  });
}
