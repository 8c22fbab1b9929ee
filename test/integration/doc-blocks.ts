/**
 * What readme.test.ts and docs-commands.test.ts share to run the commands a
 * Markdown page shows, as written: its fenced blocks (with the HTML comment
 * right above each, where a block says why it is not run), the commands of a
 * ```sh block (continuation lines joined, comments dropped), a bin directory
 * with kubectl, helm, the built `bundlesmith` and the suite's Node on PATH,
 * bash run from the repository's root against the test API server (a line
 * that ends in `&` runs in the background until stopped, as in a terminal),
 * and the chart's rendered manifest and its removal.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import { kubeconfigPath, run, tool, type RunResult } from './harness.js';

export interface Block {
  lang: string;
  body: string;
  /** The HTML comment right above the block, if any. */
  note: string | undefined;
  /** The line of the opening fence (1-based). */
  line: number;
}

/** The fenced blocks of a Markdown page, indented ones (in list items) included, their bodies unindented. */
export function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/(?:^[ \t]*<!--\s*(.*?)\s*-->\n)?^([ \t]*)```(\w*)\n([\s\S]*?)^[ \t]*```/gm)].map((m) => {
    const indent = m[2] ?? '';
    const body = (m[4] ?? '')
      .split('\n')
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join('\n');
    return { note: m[1], lang: m[3] ?? '', body, line: markdown.slice(0, (m.index ?? 0) + m[0].indexOf('```')).split('\n').length };
  });
}

/** The note with which a block opts out of `testFile` (e.g. `test/integration/readme.test.ts`), and its reason. */
export function skipReason(block: Block, testFile: string): string | undefined {
  const prefix = `not run by ${testFile}: `;
  return block.note?.startsWith(prefix) ? block.note.slice(prefix.length) : undefined;
}

/** The commands of a ```sh block in order: a line ending in `\` continues on the next; blank and comment lines dropped. */
export function commands(block: Block): string[] {
  const joined = block.body.replace(/\\\n[ \t]*/g, '');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Whether a command line runs in the background (`... &`, a trailing comment allowed), as a terminal would. */
export function isBackground(command: string): boolean {
  return /[^&]&\s*(#.*)?$/.test(command);
}

/** A directory for PATH with `bundlesmith` (the built bin), kubectl, helm and the Node this suite runs on. */
export function commandBin(prefix: string): string {
  const bin = mkdtempSync(join(tmpdir(), `${prefix}-bin-`));
  const cli = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
  chmodSync(cli, 0o755);
  symlinkSync(cli, join(bin, 'bundlesmith'));
  symlinkSync(tool('kubectl'), join(bin, 'kubectl'));
  symlinkSync(tool('helm'), join(bin, 'helm'));
  // The bin's `#!/usr/bin/env node` (and npm's) finds the Node this suite runs on.
  symlinkSync(process.execPath, join(bin, 'node'));
  return bin;
}

function shellEnv(bin: string): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfigPath(), HOME: process.env.HOME ?? '/tmp' };
}

/** Runs one command line with bash (pipes included, pipefail on) from the repository's root, against the test API server. */
export async function sh(command: string, bin: string): Promise<RunResult> {
  return await new Promise((resolve) => {
    execFile(
      'bash',
      ['-o', 'pipefail', '-c', command],
      { cwd: repoRoot(), env: shellEnv(bin), maxBuffer: 32 * 1024 * 1024, timeout: 180_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export interface BackgroundJob {
  command: string;
  /** What it has printed so far (stdout and stderr). */
  output(): string;
  /** Whether any process of the job is still running. */
  running(): boolean;
  /** SIGTERM to the job's process group, SIGKILL after 10 s. */
  stop(): Promise<void>;
}

/** Runs a `... &` command line as a terminal would: in the background, in a process group of its own, output to a file. */
export function shBackground(command: string, bin: string): BackgroundJob {
  const dir = mkdtempSync(join(tmpdir(), 'bundlesmith-job-'));
  const log = join(dir, 'output.log');
  const fd = openSync(log, 'w');
  const child = spawn('bash', ['-c', command], { cwd: repoRoot(), env: shellEnv(bin), detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const group = child.pid;
  if (group === undefined) throw new Error(`could not start: ${command}`);
  const running = (): boolean => {
    try {
      process.kill(-group, 0);
      return true;
    } catch {
      return false;
    }
  };
  const signal = (s: NodeJS.Signals): void => {
    try {
      process.kill(-group, s);
    } catch {
      // already gone
    }
  };
  return {
    command,
    output: () => readFileSync(log, 'utf8'),
    running,
    stop: async () => {
      signal('SIGTERM');
      const deadline = Date.now() + 10_000;
      while (running() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (running()) signal('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RenderedDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}

/** The chart's manifest as `helm template RELEASE charts/bundlesmith -n NAMESPACE` renders it. */
export async function renderedChart(release: string, namespace: string): Promise<RenderedDoc[]> {
  const result = await run('helm', ['template', release, join(repoRoot(), 'charts', 'bundlesmith'), '-n', namespace]);
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((d) => d.toJS() as RenderedDoc | null)
    .filter((d) => d !== null);
}

/**
 * Deletes what a `helm template ... | kubectl apply` of the chart created,
 * but the CRD (every test file's): no namespace controller runs here, so the
 * namespaced objects would stay, and a later `helm install` of the same
 * release could not take them over.
 */
export async function deleteRenderedChart(release: string, namespace: string): Promise<void> {
  const docs = (await renderedChart(release, namespace)).filter((d) => d.kind !== 'CustomResourceDefinition');
  const result = await run('kubectl', ['delete', '--ignore-not-found', '-n', namespace, '-f', '-'], {
    input: docs.map((d) => stringify(d)).join('---\n'),
  });
  if (result.code !== 0) throw new Error(`kubectl delete of the rendered chart failed: ${result.stderr}`);
}
