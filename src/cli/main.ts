#!/usr/bin/env node
/**
 * The `bundlesmith` command. Results go to stdout, progress and errors to
 * stderr. Exit codes: 0 ok, 1 problems found or an operation failed, 2 usage.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, USAGE, parseCommandLine, parseObjectRef, type ParsedCommand } from './args.js';
import { connectCluster, type Cluster } from './cluster.js';
import { readCrdReadiness, serverNow } from './cluster-state.js';
import { diffBundle, discoveryKindTable, formatDiff, type BundleDiff } from './diff.js';
import { PROBLEM_ACTIONS } from './describe-plan.js';
import { CliError, processIo, type CliIo } from './io.js';
import { parseManifests } from './manifests.js';
import { approveDeletion } from './approve.js';
import { cancelPending, deletePendingNow, formatPendingTable, listPending } from './pending.js';
import { DEFAULT_DEBUG_URL, fetchGraph, parseGraphView, renderGraph } from './gc-graph.js';
import { readBundle, readBundles, readLiveObjects, readOwnedObjects } from './inspect.js';
import { describeStatus, formatSummaryTable, summarize } from './status.js';
import { buildTree, palette, renderTree } from './tree.js';
import { formatProblem, validateFile, type FileValidation } from './validate.js';

function readManifestFile(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, EXIT_PROBLEMS);
  }
}

function validateCommand(cmd: ParsedCommand, io: CliIo): number {
  const defaultNamespace = cmd.flags.namespace ?? 'default';
  const results: { file: string; result: FileValidation }[] = [];
  for (const file of cmd.positionals) {
    let text: string;
    try {
      text = readManifestFile(file);
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      results.push({ file, result: { bundles: [], withIssues: [], skipped: [], problems: [{ file, line: 0, col: 0, message: err.message }] } });
      continue;
    }
    results.push({ file, result: validateFile(parseManifests(file, text), defaultNamespace) });
  }
  const problems = results.flatMap((r) => r.result.problems);
  const valid = results.flatMap((r) => r.result.bundles.map((b) => `${b.namespace}/${b.name}`));
  if (cmd.flags.output === 'json') {
    io.out(JSON.stringify({ valid, problems, skipped: results.flatMap((r) => r.result.skipped.map((s) => ({ file: r.file, object: s }))) }, null, 2));
  } else {
    for (const p of problems) io.out(formatProblem(p));
    for (const r of results) for (const s of r.result.skipped) io.err(`${r.file}: skipped ${s} (not a Bundle)`);
    io.err(`${valid.length} Bundle${valid.length === 1 ? '' : 's'} valid, ${problems.length} problem${problems.length === 1 ? '' : 's'}`);
  }
  return problems.length > 0 ? EXIT_PROBLEMS : EXIT_OK;
}

async function withCluster<T>(cmd: ParsedCommand, fn: (cluster: Cluster) => Promise<T>): Promise<T> {
  const cluster = await connectCluster(cmd.flags.kubeconfig);
  try {
    return await fn(cluster);
  } finally {
    cluster.close();
  }
}

async function diffCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  const file = cmd.positionals[0] ?? '';
  const text = readManifestFile(file);
  return await withCluster(cmd, async (cluster) => {
    const validation = validateFile(parseManifests(file, text), cmd.flags.namespace ?? cluster.contextNamespace, (spec) => discoveryKindTable(cluster, spec));
    for (const p of validation.problems) io.out(formatProblem(p));
    // A Bundle the schema rejects is not reconciled at all; one with semantic issues is, partly (its claims): diff it too.
    const planned = [...validation.bundles, ...validation.withIssues];
    if (planned.length === 0) {
      if (validation.problems.length > 0) return EXIT_PROBLEMS;
      throw new CliError(`${file}: no Bundle found`, EXIT_PROBLEMS);
    }
    const crdReadiness = await readCrdReadiness(cluster, io);
    const diffs: BundleDiff[] = [];
    for (const bundle of planned) diffs.push(await diffBundle(cluster, bundle, crdReadiness, io));
    if (cmd.flags.output === 'json') io.out(JSON.stringify({ bundles: diffs }, null, 2));
    else for (const d of diffs) for (const line of formatDiff(d)) io.out(line);
    return validation.problems.length > 0 || diffs.some((d) => d.entries.some((e) => PROBLEM_ACTIONS.has(e.action))) ? EXIT_PROBLEMS : EXIT_OK;
  });
}

async function pendingCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  return await withCluster(cmd, async (cluster) => {
    const items = await listPending(cluster, cmd.flags.namespace, io);
    if (cmd.flags.output === 'json') io.out(JSON.stringify({ items }, null, 2));
    else if (items.length === 0) io.err('no objects are pending deletion');
    else for (const line of formatPendingTable(items, serverNow(cluster).now)) io.out(line);
    return EXIT_OK;
  });
}

async function objectCommand(cmd: ParsedCommand, io: CliIo, action: typeof cancelPending): Promise<number> {
  const ref = parseObjectRef(cmd.positionals[0] ?? '');
  if (!ref) throw new CliError(`"${cmd.positionals[0] ?? ''}" is not KIND/NAME`, EXIT_USAGE);
  return await withCluster(cmd, async (cluster) => {
    await action(cluster, ref, cmd.flags.namespace ?? cluster.contextNamespace, io);
    return EXIT_OK;
  });
}

const WATCH_INTERVAL_MS = 2_000;
const WAIT_POLL_MS = 1_000;
const DEFAULT_WAIT_MS = 5 * 60_000;

/** Resolves after `ms`, or at once when the signal aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });
}

/** Draws once, or (--watch) again every 2 s until interrupted, in place on a terminal. */
async function drawLoop(cmd: ParsedCommand, io: CliIo, draw: () => Promise<number>): Promise<number> {
  if (!cmd.flags.watch) return await draw();
  let code = EXIT_OK;
  while (!io.signal?.aborted) {
    if (io.isTty) io.out('\x1b[H\x1b[2J');
    code = await draw();
    if (!io.isTty) io.out('');
    await pause(WATCH_INTERVAL_MS, io.signal);
  }
  return code;
}

async function treeCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  const name = cmd.positionals[0] ?? '';
  return await withCluster(cmd, async (cluster) => {
    const namespace = cmd.flags.namespace ?? cluster.contextNamespace;
    return await drawLoop(cmd, io, async () => {
      const bundle = await readBundle(cluster, namespace, name);
      const tree = buildTree({ bundle, live: await readLiveObjects(cluster, bundle), owners: await readOwnedObjects(cluster, namespace, io), now: io.now?.() ?? serverNow(cluster).now });
      if (cmd.flags.output === 'json') io.out(JSON.stringify(tree, null, 2));
      else for (const line of renderTree(tree, palette(io.isTty === true && !cmd.flags.noColor))) io.out(line);
      return EXIT_OK;
    });
  });
}

async function statusCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  const name = cmd.positionals[0];
  return await withCluster(cmd, async (cluster) => {
    const namespace = cmd.flags.all ? undefined : (cmd.flags.namespace ?? cluster.contextNamespace);
    const now = () => io.now?.() ?? serverNow(cluster).now;
    if (name !== undefined && cmd.flags.wait) {
      const deadline = Date.now() + (cmd.flags.timeoutMs ?? DEFAULT_WAIT_MS);
      for (;;) {
        const bundle = await readBundle(cluster, namespace ?? cluster.contextNamespace, name);
        const { ready } = summarize(bundle, now());
        if (ready || Date.now() >= deadline || io.signal?.aborted) {
          for (const line of describeStatus(bundle, now())) io.out(line);
          return ready ? EXIT_OK : EXIT_PROBLEMS;
        }
        await pause(WAIT_POLL_MS, io.signal);
      }
    }
    return await drawLoop(cmd, io, async () => {
      if (name !== undefined) {
        const bundle = await readBundle(cluster, namespace ?? cluster.contextNamespace, name);
        if (cmd.flags.output === 'json') io.out(JSON.stringify({ summary: summarize(bundle, now()), status: bundle.status ?? {} }, null, 2));
        else for (const line of describeStatus(bundle, now())) io.out(line);
        return summarize(bundle, now()).ready ? EXIT_OK : EXIT_PROBLEMS;
      }
      const summaries = (await readBundles(cluster, namespace)).map((b) => summarize(b, now()));
      if (cmd.flags.output === 'json') io.out(JSON.stringify({ items: summaries }, null, 2));
      else if (summaries.length === 0) io.err(`no Bundles${namespace ? ` in ${namespace}` : ''}`);
      else for (const line of formatSummaryTable(summaries)) io.out(line);
      return summaries.every((s) => s.ready) ? EXIT_OK : EXIT_PROBLEMS;
    });
  });
}

async function gcGraphCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  const owner = cmd.flags.owner;
  if (!owner) throw new CliError('gc-graph needs --owner KIND/NAME', EXIT_USAGE);
  const url = cmd.flags.debugUrl ?? DEFAULT_DEBUG_URL;
  if (cmd.flags.output === 'dot') {
    io.out((await fetchGraph(url, owner, cmd.flags.namespace, 'dot')).trimEnd());
    return EXIT_OK;
  }
  const body = await fetchGraph(url, owner, cmd.flags.namespace, 'json');
  if (cmd.flags.output === 'json') io.out(body.trimEnd());
  else for (const line of renderGraph(parseGraphView(body))) io.out(line);
  return EXIT_OK;
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (!parsed.ok) {
    for (const e of parsed.errors) io.err(`bundlesmith: ${e}`);
    io.err(USAGE);
    return EXIT_USAGE;
  }
  const cmd = parsed.parsed;
  try {
    switch (cmd.command) {
      case 'help':
        io.out(USAGE);
        return EXIT_OK;
      case 'validate':
        return validateCommand(cmd, io);
      case 'diff':
        return await diffCommand(cmd, io);
      case 'pending':
        return await pendingCommand(cmd, io);
      case 'cancel':
        return await objectCommand(cmd, io, cancelPending);
      case 'approve':
        return await objectCommand(cmd, io, approveDeletion);
      case 'delete-now':
        return await objectCommand(cmd, io, deletePendingNow);
      case 'tree':
        return await treeCommand(cmd, io);
      case 'status':
        return await statusCommand(cmd, io);
      case 'gc-graph':
        return await gcGraphCommand(cmd, io);
    }
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`bundlesmith: ${err.message}`);
      return err.exitCode;
    }
    io.err(`bundlesmith: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT_PROBLEMS;
  }
}

/** Whether this module is the program (also through npm's bin symlink), not imported by a test. */
function isProgram(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return pathToFileURL(realpathSync(script)).href === import.meta.url;
  } catch {
    return false;
  }
}

if (isProgram()) {
  runCli(process.argv.slice(2), processIo).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`bundlesmith: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = EXIT_PROBLEMS;
    },
  );
}
