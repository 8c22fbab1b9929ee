/**
 * The operator's image (issue 24, part 7), built as `npm run image` builds
 * it (hack/image/build.ts, no container engine):
 *
 * - reproducible: a second build, with another umask, time zone, working
 *   directory and temporary directory, gives the same archive, byte for byte;
 * - a valid OCI image layout: every digest and size matches its blob, the
 *   config's diff_ids match the layers uncompressed, and GNU tar unpacks the
 *   layers;
 * - pushed as the README says (`skopeo copy oci-archive:... docker://...`) to
 *   a registry on loopback (Debian's docker-registry, the CNCF distribution
 *   registry), it keeps its digest; the chart pointed at it (image.repository
 *   and image.tag, or image.digest) renders a reference that skopeo pulls
 *   back as the same image;
 * - its entrypoint runs: the pulled layers unpacked by GNU tar into a root
 *   filesystem, run in a chroot as the image's user with the image's Env and
 *   Entrypoint and the arguments the chart renders, against the test control
 *   plane with a kubelet-style service account mount (in-cluster config).
 *   The operator becomes ready, reconciles a Bundle to Ready, writes nothing
 *   outside /tmp, and exits 0 on SIGTERM.
 *
 * What a chroot is not: no mount, PID or network namespace, no cgroup limits
 * and no read-only mount (the test checks instead that nothing in the root
 * filesystem was written); the working directory is /, not the config's
 * /app (the entrypoint's paths are absolute). A chroot needs root
 * (CAP_SYS_CHROOT): as another user the test fails, saying so.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse, parseAllDocuments } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import { readTar } from '../../hack/image/tar.js';
import { validateOciArchive, type ValidatedImage } from '../../hack/image/oci.js';
import { git } from '../../hack/image/build.js';
import { freePort } from '../../hack/ports.js';
import { applyBundle, configMap, types, waitForReady } from './bundles.js';
import { connect, createNamespace, kubeconfigPath, run, waitFor, type TestEnv } from './harness.js';
import { chart } from './chart.js';

interface BuildResult {
  archive: string;
  archiveSha256: string;
  manifestDigest: string;
  version: string;
}

const work = mkdtempSync(join(tmpdir(), 'bundlesmith-image-test-'));
const builder = join(repoRoot(), 'dist', 'hack', 'image', 'build.js');

/** Runs the compiled builder (npm test built dist/) the way `npm run image` does after its build step. */
async function build(out: string, shell = ''): Promise<BuildResult> {
  return await new Promise((resolve, reject) => {
    execFile(
      'bash',
      ['-c', `${shell} exec "$0" "$1" --out "$2"`, process.execPath, builder, out],
      { cwd: repoRoot(), maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`image build failed: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '') as BuildResult);
      },
    );
  });
}

let first: BuildResult;
let env: TestEnv;

beforeAll(async () => {
  first = await build(join(work, 'a'));
  env = await connect();
}, 120_000);

afterAll(() => {
  env?.close();
  rmSync(work, { recursive: true, force: true });
});

test('two builds in different surroundings give the same archive, byte for byte', async () => {
  const otherTmp = join(work, 'tmp-b');
  mkdirSync(otherTmp);
  // Another umask, time zone, working directory and TMPDIR; SOURCE_DATE_EPOCH unset (the last commit's time).
  const second = await build(join(work, 'b'), `umask 077; cd /; export TZ=Pacific/Kiritimati TMPDIR=${otherTmp}; unset SOURCE_DATE_EPOCH;`);
  expect(second.manifestDigest).toBe(first.manifestDigest);
  expect(second.archiveSha256).toBe(first.archiveSha256);
  expect(readFileSync(second.archive).equals(readFileSync(first.archive))).toBe(true);
}, 120_000);

test('the archive is a valid OCI image layout and the image is configured to run unprivileged', () => {
  const built: ValidatedImage = validateOciArchive(first.archive);
  const { config, manifest, index } = built;
  expect(index.manifests[0]?.annotations?.['org.opencontainers.image.ref.name']).toBe(first.version);
  expect(manifest.layers).toHaveLength(2);
  expect(config.os).toBe('linux');
  expect(config.config.User).toBe('65532:65532');
  expect(config.config.Entrypoint).toEqual(['/usr/local/bin/node', '/app/dist/src/main.js']);
  const labels = config.config.Labels ?? {};
  expect(labels['org.opencontainers.image.version']).toBe(first.version);
  expect(labels['org.opencontainers.image.revision']).toBe(git(repoRoot(), ['rev-parse', 'HEAD']));
  expect(labels['org.opencontainers.image.licenses']).toBe('Apache-2.0');
  expect(labels['bundlesmith.image.node-version']).toBe(
    (JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies
      .node,
  );

  const entries = built.layers.flatMap((layer) => readTar(gunzipSync(layer)));
  const paths = new Set(entries.map((e) => e.path));
  // Every entry has the same mtime (SOURCE_DATE_EPOCH), root owns everything but the user's home.
  expect(new Set(entries.map((e) => e.mtime)).size).toBe(1);
  expect(new Date(entries[0]!.mtime * 1000).toISOString().replace(/\.000Z$/, 'Z')).toBe(config.created);
  expect(entries.filter((e) => e.uid !== 0 || e.gid !== 0).map((e) => `${e.path} ${e.uid}:${e.gid}`)).toEqual(['home/nonroot 65532:65532']);
  // A distroless-like base: the runtime and its libraries, no shell, no package manager.
  for (const p of [
    'usr/local/bin/node',
    'lib64/ld-linux-x86-64.so.2',
    'usr/lib/x86_64-linux-gnu/libstdc++.so.6',
    'etc/ssl/certs/ca-certificates.crt',
    'etc/passwd',
    'var/lib/dpkg/status.d/libc6',
    'app/dist/src/main.js',
    'app/node_modules/@kubernetes/client-node/package.json',
    'app/crds/bundles.smith.atlassian.com.yaml',
  ]) {
    expect(paths.has(p) ? p : `missing ${p}`).toBe(p);
  }
  for (const p of ['bin/sh', 'bin/bash', 'usr/bin/apt', 'usr/bin/npm', 'app/node_modules/typescript', 'app/node_modules/jest', 'app/src'])
    expect(paths.has(p) ? `unexpected ${p}` : p).toBe(p);
  // Only compiled JavaScript from dist/src: no source maps, no test or hack code.
  expect(entries.filter((e) => e.path.startsWith('app/dist/') && e.type === 'file' && !e.path.endsWith('.js'))).toEqual([]);
}, 60_000);

function tarExtract(gz: Buffer, into: string): Promise<void> {
  const file = join(work, 'layer.tar.gz');
  writeFileSync(file, gz);
  return new Promise((resolve, reject) => {
    execFile('tar', ['-xzpf', file, '--numeric-owner', '-C', into], (err, _out, stderr) =>
      err ? reject(new Error(`GNU tar could not unpack a layer: ${stderr}`)) : resolve(),
    );
  });
}

function httpStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Every path under `dir` (not descending into `skip`) modified after `since` (ms). */
function changedSince(dir: string, since: number, skip: string[]): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    const abs = rel === '' ? dir : join(dir, rel);
    const st = lstatSync(abs);
    if (rel !== '' && Math.max(st.mtimeMs, st.ctimeMs) > since) out.push(rel);
    if (st.isDirectory() && !skip.includes(rel)) for (const name of readdirSync(abs).sort()) walk(rel === '' ? name : `${rel}/${name}`);
  };
  walk('');
  return out;
}

/** skopeo and docker-registry, installed from Debian's packages when missing (hack/image/registry-tools.sh). */
function registryTools(): Promise<{ skopeo: string; registry: string }> {
  return new Promise((resolve, reject) => {
    execFile('bash', [join(repoRoot(), 'hack', 'image', 'registry-tools.sh')], (err, stdout, stderr) => {
      const [skopeo, registry] = stdout.trim().split('\n').slice(-2);
      if (err || !skopeo || !registry) reject(new Error(`hack/image/registry-tools.sh failed: ${stderr}`));
      else resolve({ skopeo, registry });
    });
  });
}

function skopeo(path: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(path, args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`skopeo ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
  });
}

interface RenderedContainer {
  image: string;
  args: string[];
}

/** The operator container the chart renders with these values. */
async function renderChart(ns: string, set: string): Promise<RenderedContainer> {
  const rendered = await run('helm', ['template', 'img', chart, '-n', ns, '--set', set]);
  expect(rendered.stderr).toBe('');
  const deployment = parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: RenderedContainer[] } } } } | null)
    .find((d) => d?.kind === 'Deployment');
  const container = deployment?.spec?.template.spec.containers[0];
  if (!container) throw new Error(`the chart rendered no operator container:\n${rendered.stdout}`);
  return container;
}

let registryProcess: ChildProcess | undefined;
afterAll(async () => {
  const registry = registryProcess;
  if (registry === undefined || registry.exitCode !== null || registry.signalCode !== null) return;
  const exited = new Promise((resolve) => registry.on('exit', resolve));
  registry.kill('SIGTERM');
  await exited;
});

test("pushed to a registry as the README says and pulled back by the chart's reference, the image's entrypoint runs the operator with the chart's arguments, which reconciles a Bundle", async () => {
  if (process.getuid?.() !== 0)
    throw new Error('this test runs the image in a chroot, which needs root (CAP_SYS_CHROOT); run the suite as root');
  const tools = await registryTools();

  // A registry on loopback (the CNCF distribution registry, plain HTTP).
  const registryPort = await freePort();
  const registryConfig = join(work, 'registry.yml');
  writeFileSync(
    registryConfig,
    `version: 0.1\nlog: {level: warn}\nstorage: {filesystem: {rootdirectory: ${join(work, 'registry')}}}\nhttp: {addr: 127.0.0.1:${registryPort}}\n`,
  );
  registryProcess = spawn(tools.registry, ['serve', registryConfig], { stdio: ['ignore', 'ignore', 'pipe'] });
  let registryLog = '';
  registryProcess.stderr?.on('data', (d: Buffer) => (registryLog += d.toString()));
  await waitFor('the registry to serve /v2/', async () => (await httpStatus(registryPort, '/v2/')) === 200, { timeoutMs: 20_000 }).catch(
    (err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${registryLog}`);
    },
  );

  // The README's push: skopeo copy oci-archive:... docker://REGISTRY/REPO:VERSION, digests preserved.
  const repository = `127.0.0.1:${registryPort}/platform/bundlesmith`;
  await skopeo(tools.skopeo, [
    'copy',
    '--preserve-digests',
    '--dest-tls-verify=false',
    `oci-archive:${first.archive}`,
    `docker://${repository}:${first.version}`,
  ]);

  // The chart pointed at it as the README says: by tag, and by digest.
  const ns = await createNamespace(env, 'image');
  const [healthPort, metricsPort] = [await freePort(), await freePort()];
  const values = `replicaCount=1,watchNamespace=${ns},health.port=${healthPort},metrics.port=${metricsPort},crds.install=false`;
  expect((await renderChart(ns, `image.repository=${repository},image.tag=${first.version},${values}`)).image).toBe(
    `${repository}:${first.version}`,
  );
  const container = await renderChart(
    ns,
    `image.repository=${repository},image.tag=${first.version},image.digest=${first.manifestDigest},${values}`,
  );
  expect(container.image).toBe(`${repository}@${first.manifestDigest}`);

  // What a node would pull: the chart's reference, from the registry; the same image, and a valid one.
  const pulled = join(work, 'pulled.oci.tar');
  await skopeo(tools.skopeo, ['copy', '--src-tls-verify=false', `docker://${container.image}`, `oci-archive:${pulled}`]);
  const image = validateOciArchive(pulled);
  expect(image.manifestDigest).toBe(first.manifestDigest);
  const byTag = JSON.parse(await skopeo(tools.skopeo, ['inspect', '--tls-verify=false', `docker://${repository}:${first.version}`])) as {
    Digest: string;
  };
  expect(byTag.Digest).toBe(first.manifestDigest);

  // Its layers, unpacked by GNU tar in order, are the container's root filesystem.
  const rootfs = join(work, 'rootfs');
  mkdirSync(rootfs);
  for (const layer of image.layers) await tarExtract(layer, rootfs);
  const args = container.args.map((a) => (a.startsWith('--metrics-addr=') ? `--metrics-addr=127.0.0.1:${metricsPort}` : a));

  // What the kubelet gives a pod: the service account mount and the API server's address in the environment.
  const kubeconfig = parse(readFileSync(kubeconfigPath(), 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const server = new URL(kubeconfig.clusters[0]!.cluster.server);
  const sa = join(rootfs, 'var', 'run', 'secrets', 'kubernetes.io', 'serviceaccount');
  mkdirSync(sa, { recursive: true });
  writeFileSync(join(sa, 'ca.crt'), Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64'));
  writeFileSync(join(sa, 'token'), kubeconfig.users[0]!.user.token);
  writeFileSync(join(sa, 'namespace'), ns);

  const config = image.config.config;
  const [user, group] = (config.User ?? '').split(':');
  const envVars = Object.fromEntries((config.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const startedAt = Date.now();
  await new Promise((r) => setTimeout(r, 20)); // mtimes after this are the operator's
  const logFile = join(work, 'operator.log');
  const log = createWriteStream(logFile);
  const child = spawn('chroot', [`--userspec=${user}:${group}`, '--groups=', rootfs, ...(config.Entrypoint ?? []), ...args], {
    env: { ...envVars, HOSTNAME: 'bundlesmith-image-test', KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const logTail = (): string => readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
  try {
    await waitFor(
      'the operator in the image to be ready',
      async () =>
        child.exitCode === null
          ? (await httpStatus(healthPort, '/readyz')) === 200
          : Promise.reject(new Error(`exited ${child.exitCode}: ${logTail()}`)),
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    // Running as the image's user, not as root.
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe('65532');
    expect(/^Gid:\s+(\d+)/m.exec(status)?.[1]).toBe('65532');

    await applyBundle(env, ns, 'from-the-image', [{ name: 'settings', object: configMap('settings', { from: 'image' }) }]);
    await waitForReady(env, ns, 'from-the-image');
    const cm = await env.client.tryGet((await types(env)).configMap, ns, 'settings');
    expect(cm?.data).toEqual({ from: 'image' });
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\noperator log (last lines):\n${logTail()}`);
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
  // The chart mounts the root filesystem read-only with an emptyDir on /tmp: nothing else may have been written.
  expect(changedSince(rootfs, startedAt, ['tmp'])).toEqual([]);
}, 120_000);
