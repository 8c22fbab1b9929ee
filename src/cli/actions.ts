/**
 * What each command does, given its parsed command line (commands.ts
 * declares the command lines). Results go to stdout, progress and errors to
 * stderr.
 */
import { readFileSync } from 'node:fs';
import { EXIT_CHANGES, EXIT_DIFF_ERROR, EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, parseObjectRef, type ParsedCommand } from './args.js';
import { connectCluster, type Cluster } from './cluster.js';
import { readCrdReadiness, serverNow } from './cluster-state.js';
import { diffBundle, discoveryKindTable, formatDiff, type BundleDiff } from './diff.js';
import { PROBLEM_ACTIONS, isChange } from './describe-plan.js';
import { CliError, type CliIo } from './io.js';
import { parseManifests } from './manifests.js';
import { approveDeletion } from './approve.js';
import { emit, isStructured } from './output.js';
import { formatPendingTable, listPending } from './pending-list.js';
import { cancelPending, deletePendingNow } from './pending-target.js';
import { DEFAULT_DEBUG_URL, fetchGraph, parseGraphView, renderGraph } from './gc-graph.js';
import { readBundle, readBundles, readLiveObjects, readOwnedObjects } from './inspect.js';
import { describeStatus, formatSummaryTable, summarize } from './status.js';
import { buildTree, palette, renderTree } from './tree.js';
import { formatProblem, validateFile, type FileValidation, type Problem } from './validate.js';
import { readHealthChecksFile } from '../core/bundle/health-checks.js';
import { parse as parseYaml } from 'yaml';

function readManifestFile(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, EXIT_PROBLEMS);
  }
}

export function validateCommand(cmd: ParsedCommand, io: CliIo): number {
  const defaultNamespace = cmd.flags.namespace ?? 'default';
  const results: { file: string; result: FileValidation }[] = [];
  for (const file of cmd.positionals) {
    let text: string;
    try {
      text = readManifestFile(file);
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      results.push({
        file,
        result: { bundles: [], withIssues: [], skipped: [], problems: [{ file, line: 0, col: 0, message: err.message }] },
      });
      continue;
    }
    results.push({ file, result: validateFile(parseManifests(file, text), defaultNamespace) });
  }
  const problems = [...results.flatMap((r) => r.result.problems), ...healthChecksFileProblems(cmd.flags.healthChecksFile)];
  const valid = results.flatMap((r) => r.result.bundles.map((b) => `${b.namespace}/${b.name}`));
  if (isStructured(cmd.flags.output)) {
    emit(io, cmd.flags.output, {
      valid,
      problems,
      skipped: results.flatMap((r) => r.result.skipped.map((s) => ({ file: r.file, object: s }))),
    });
  } else {
    for (const p of problems) io.out(formatProblem(p));
    for (const r of results) for (const s of r.result.skipped) io.err(`${r.file}: skipped ${s} (not a Bundle)`);
    io.err(`${valid.length} Bundle${valid.length === 1 ? '' : 's'} valid, ${problems.length} problem${problems.length === 1 ? '' : 's'}`);
  }
  return problems.length > 0 ? EXIT_PROBLEMS : EXIT_OK;
}

/** The operator's --health-checks-file, judged by the reader the operator runs at start. */
function healthChecksFileProblems(file: string | undefined): Problem[] {
  if (file === undefined) return [];
  let document: unknown;
  try {
    document = parseYaml(readManifestFile(file));
  } catch (err) {
    return [{ file, line: 0, col: 0, message: err instanceof Error ? err.message : String(err) }];
  }
  const read = readHealthChecksFile(document);
  return read.ok ? [] : read.issues.map((message) => ({ file, line: 0, col: 0, message }));
}

async function withCluster<T>(cmd: ParsedCommand, fn: (cluster: Cluster) => Promise<T>): Promise<T> {
  const cluster = await connectCluster(cmd.flags.kubeconfig, cmd.flags.context);
  try {
    return await fn(cluster);
  } finally {
    cluster.close();
  }
}

/**
 * kubectl diff's contract, so a CI step can gate on it: 0 when applying the
 * file changes nothing, 1 when it changes something, 2 when the Bundle is
 * invalid, an object would be refused, or the diff could not be computed.
 */
export async function diffCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  try {
    return await diffFile(cmd, io);
  } catch (err) {
    if (err instanceof CliError) throw new CliError(err.message, EXIT_DIFF_ERROR);
    throw new CliError(err instanceof Error ? err.message : String(err), EXIT_DIFF_ERROR);
  }
}

async function diffFile(cmd: ParsedCommand, io: CliIo): Promise<number> {
  const file = cmd.positionals[0] ?? '';
  const text = readManifestFile(file);
  return await withCluster(cmd, async (cluster) => {
    const validation = validateFile(parseManifests(file, text), cmd.flags.namespace ?? cluster.contextNamespace, (spec) =>
      discoveryKindTable(cluster, spec),
    );
    for (const p of validation.problems) io.err(formatProblem(p));
    // A Bundle the schema rejects is not reconciled at all; one with semantic issues is, partly (its claims): diff it too.
    const planned = [...validation.bundles, ...validation.withIssues];
    if (planned.length === 0) {
      if (validation.problems.length > 0) return EXIT_DIFF_ERROR;
      throw new CliError(`${file}: no Bundle found`, EXIT_DIFF_ERROR);
    }
    const crdReadiness = await readCrdReadiness(cluster, io);
    const diffs: BundleDiff[] = [];
    for (const bundle of planned) diffs.push(await diffBundle(cluster, bundle, crdReadiness, io));
    if (isStructured(cmd.flags.output)) emit(io, cmd.flags.output, { bundles: diffs, problems: validation.problems });
    else for (const d of diffs) for (const line of formatDiff(d)) io.out(line);
    const entries = diffs.flatMap((d) => d.entries);
    if (validation.problems.length > 0 || entries.some((e) => PROBLEM_ACTIONS.has(e.action))) return EXIT_DIFF_ERROR;
    return diffs.some((d) => !d.exists) || entries.some(isChange) ? EXIT_CHANGES : EXIT_OK;
  });
}

export async function pendingCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  return await withCluster(cmd, async (cluster) => {
    // Every namespace unless -n names one (-A says so explicitly).
    const items = await listPending(cluster, cmd.flags.all ? undefined : cmd.flags.namespace, io);
    if (isStructured(cmd.flags.output)) emit(io, cmd.flags.output, { items });
    else if (items.length === 0) io.err('no objects are pending deletion');
    else for (const line of formatPendingTable(items, serverNow(cluster).now)) io.out(line);
    return EXIT_OK;
  });
}

export async function objectCommand(cmd: ParsedCommand, io: CliIo, action: typeof cancelPending): Promise<number> {
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

export async function treeCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  const name = cmd.positionals[0] ?? '';
  return await withCluster(cmd, async (cluster) => {
    const namespace = cmd.flags.namespace ?? cluster.contextNamespace;
    return await drawLoop(cmd, io, async () => {
      const bundle = await readBundle(cluster, namespace, name);
      const tree = buildTree({
        bundle,
        live: await readLiveObjects(cluster, bundle),
        owners: await readOwnedObjects(cluster, namespace, io),
        now: io.now?.() ?? serverNow(cluster).now,
      });
      if (isStructured(cmd.flags.output)) emit(io, cmd.flags.output, tree);
      else for (const line of renderTree(tree, palette(io.isTty === true && !cmd.flags.noColor))) io.out(line);
      return EXIT_OK;
    });
  });
}

export async function statusCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
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
        if (isStructured(cmd.flags.output)) emit(io, cmd.flags.output, { summary: summarize(bundle, now()), status: bundle.status ?? {} });
        else for (const line of describeStatus(bundle, now())) io.out(line);
        return summarize(bundle, now()).ready ? EXIT_OK : EXIT_PROBLEMS;
      }
      const summaries = (await readBundles(cluster, namespace)).map((b) => summarize(b, now()));
      if (isStructured(cmd.flags.output)) emit(io, cmd.flags.output, { items: summaries });
      else if (summaries.length === 0) io.err(`no Bundles${namespace ? ` in ${namespace}` : ''}`);
      else for (const line of formatSummaryTable(summaries)) io.out(line);
      return summaries.every((s) => s.ready) ? EXIT_OK : EXIT_PROBLEMS;
    });
  });
}

export async function gcGraphCommand(cmd: ParsedCommand, io: CliIo): Promise<number> {
  const owner = cmd.flags.owner;
  if (!owner) throw new CliError('gc-graph needs --owner KIND/NAME', EXIT_USAGE);
  const url = cmd.flags.debugUrl ?? DEFAULT_DEBUG_URL;
  if (cmd.flags.output === 'dot') {
    io.out((await fetchGraph(url, owner, cmd.flags.namespace, 'dot')).trimEnd());
    return EXIT_OK;
  }
  const body = await fetchGraph(url, owner, cmd.flags.namespace, 'json');
  if (cmd.flags.output === 'json') io.out(body.trimEnd());
  else if (cmd.flags.output === 'yaml') emit(io, 'yaml', parseGraphView(body));
  else for (const line of renderGraph(parseGraphView(body))) io.out(line);
  return EXIT_OK;
}

export { approveDeletion, cancelPending, deletePendingNow };
