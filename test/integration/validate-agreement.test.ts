/**
 * Issue 25: `bundlesmith validate` is the operator's judgement, offline. The
 * bad-input suite's table (bad-input-cases.ts), which bad-input.test.ts runs
 * through the real API server and operator, runs here through the built
 * `validate`: each case the API server or the operator refuses, validate
 * refuses too, with a message the case's pattern matches (the same words);
 * only the cases that need the cluster pass offline, each saying why.
 */
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';
import { doorCases, operatorCases, type RawResource } from './bad-input-cases.js';
import { connect, createNamespace, kubeconfigPath } from './harness.js';

const NS = 'agreement';

interface ValidateJson {
  valid: string[];
  problems: { bundle?: string; message: string }[];
}

function bundle(name: string, resources: RawResource[], spec: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name }, spec: { ...spec, resources } });
}

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), ...args], (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function validate(file: string): Promise<{ code: number; json: ValidateJson }> {
  return await new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'validate', file, '-n', NS, '-o', 'json'],
      { maxBuffer: 64 * 1024 * 1024 },
      (err, stdout) => {
        try {
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, json: JSON.parse(stdout) as ValidateJson });
        } catch (parseError) {
          reject(parseError instanceof Error ? parseError : new Error(String(parseError)));
        }
      },
    );
  });
}

interface Verdict {
  title: string;
  refused: boolean;
  /** Whether one of validate's messages for the case matches the case's pattern (the operator's or API server's words). */
  sameWords: boolean;
}

it('gives every case of the bad-input table the verdict the API server and the operator give it, in the same words', async () => {
  const cases = [
    ...operatorCases.map((c, i) => ({
      name: `case-${i}`,
      title: c.title,
      says: c.says,
      needsCluster: c.needsCluster,
      text: bundle(`case-${i}`, c.resources(i), c.spec),
    })),
    ...doorCases.map((c, i) => ({
      name: `door-${i}`,
      title: c.title,
      says: c.says,
      needsCluster: undefined,
      text: bundle(`door-${i}`, c.resources, c.spec),
    })),
  ];
  const file = join(tmpdir(), `agreement-${process.pid}.yaml`);
  writeFileSync(file, cases.map((c) => c.text).join('\n---\n'));

  const { code, json } = await validate(file).finally(() => rmSync(file, { force: true }));
  expect(code).toBe(1);
  const got: Verdict[] = cases.map((c) => {
    const messages = json.problems.filter((p) => p.bundle === `${NS}/${c.name}`).map((p) => p.message);
    return { title: c.title, refused: messages.length > 0, sameWords: messages.some((m) => c.says.test(m)) };
  });
  const want: Verdict[] = cases.map((c) => ({
    title: c.title,
    refused: c.needsCluster === undefined,
    sameWords: c.needsCluster === undefined,
  }));
  expect(got).toEqual(want);
  // What needs the cluster passes offline: validate says yes only to what it cannot judge.
  expect(json.valid.sort()).toEqual(
    cases
      .filter((c) => c.needsCluster !== undefined)
      .map((c) => `${NS}/${c.name}`)
      .sort(),
  );
});

it("diff, with the cluster, refuses what validate leaves to it: a kind the API server does not know (exit 2, the operator's words)", async () => {
  const env = await connect();
  try {
    const ns = await createNamespace(env, 'agreement');
    const index = operatorCases.findIndex((c) => c.title === 'an unknown kind');
    const c = operatorCases[index];
    if (c === undefined) throw new Error('the table has no unknown-kind case');
    const file = join(tmpdir(), `agreement-kind-${process.pid}.json`);
    writeFileSync(file, bundle(`case-${index}`, c.resources(index), c.spec));
    try {
      expect((await cli(['validate', file])).code).toBe(0);
      const diff = await cli(['diff', file, '-n', ns, '--kubeconfig', kubeconfigPath()]);
      expect(diff.code).toBe(2);
      expect(diff.stderr).toMatch(c.says);
    } finally {
      rmSync(file, { force: true });
    }
  } finally {
    env.close();
  }
});
