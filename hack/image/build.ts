/**
 * Builds the operator's container image without a container engine, as an
 * OCI archive (`npm run image`; hack/image/build.sh builds dist/ first):
 *
 *   base layer  Debian's libc6, libgcc-s1, libstdc++6 (what Node links
 *               against), ca-certificates and netbase, taken from their
 *               .debs (hack/image/debs.sh); /etc/passwd and /etc/group with
 *               a nonroot user (65532), /tmp, /home/nonroot; the pinned
 *               Node (the `node` devDependency) as /usr/local/bin/node.
 *               No shell, no package manager: a distroless-like base.
 *   app layer   /app: package.json, crds/, dist/src (the .js compiled from
 *               src/, nothing stale), and the production packages of
 *               package-lock.json (every entry not marked dev) copied from
 *               node_modules.
 *
 * Reproducible: every entry's mtime is SOURCE_DATE_EPOCH (default: the last
 * commit's time), owners are numeric (0, or 65532 for /home/nonroot), modes
 * are normalized, entries are sorted, the tars are written by hack/image/tar.ts
 * and compressed with `gzip -n`. The same commit, the same .debs and the same
 * node_modules give the same bytes, whatever the umask, the time or the
 * directory the build runs in.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';
import { TarWriter, readTar, type TarEntry } from './tar.js';
import {
  MediaTypes,
  canonicalJson,
  sha256,
  writeOciArchive,
  type Blob,
  type Descriptor,
  type ImageConfig,
  type Index,
  type Manifest,
} from './oci.js';

/** The non-root user the image runs as (distroless's "nonroot"); the chart's runAsNonRoot checks a numeric one. */
export const IMAGE_UID = 65532;
export const ENTRYPOINT = ['/usr/local/bin/node', '/app/dist/src/main.js'];

export interface BuildOptions {
  /** Directory the archive is written to; default dist/image. */
  outDir?: string;
  /** Progress messages; default: to stderr. */
  log?: (message: string) => void;
}

export interface BuildResult {
  archive: string;
  archiveSha256: string;
  manifestDigest: string;
  version: string;
}

interface Layer {
  blob: Blob;
  descriptor: Descriptor;
  diffId: string;
  createdBy: string;
}

const ARCH: Record<string, { oci: string; node: string }> = {
  x64: { oci: 'amd64', node: 'linux-x64' },
  arm64: { oci: 'arm64', node: 'linux-arm64' },
};

/** A git command's output, or undefined outside a git checkout (e.g. a source tarball). */
export function git(root: string, args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

/** Entries of one layer, keyed by path; parent directories are added as 0755 root-owned when missing. */
class Tree {
  private readonly entries = new Map<string, TarEntry>();

  set(entry: TarEntry): void {
    const path = entry.path.replace(/^\/+/, '').replace(/\/+$/, '');
    if (path === '' || path === '.') return;
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (!this.entries.has(parent)) this.entries.set(parent, { path: parent, type: 'dir', mode: 0o755, uid: 0, gid: 0 });
    }
    const existing = this.entries.get(path);
    if (existing?.type === 'dir' && entry.type === 'dir') {
      // Two packages own one directory: keep the first's mode unless this one sets an owner.
      if (entry.uid !== 0 || entry.gid !== 0) this.entries.set(path, { ...entry, path });
      return;
    }
    this.entries.set(path, { ...entry, path });
  }

  /** A file from the build machine, mode normalized to 0755 (any execute bit) or 0644, owner root. */
  copyFile(path: string, source: string): void {
    const executable = (statSync(source).mode & 0o111) !== 0;
    this.set({ path, type: 'file', mode: executable ? 0o755 : 0o644, uid: 0, gid: 0, data: () => readFileSync(source) });
  }

  /** A directory tree from the build machine; `skip` decides by path relative to `source`. */
  copyTree(path: string, source: string, skip: (rel: string) => boolean = () => false): void {
    const walk = (rel: string): void => {
      const abs = join(source, rel);
      const st = lstatSync(abs);
      const target = rel === '' ? path : `${path}/${rel}`;
      if (st.isDirectory()) {
        this.set({ path: target, type: 'dir', mode: 0o755, uid: 0, gid: 0 });
        for (const name of readdirSync(abs).sort()) {
          const child = rel === '' ? name : `${rel}/${name}`;
          if (!skip(child)) walk(child);
        }
      } else if (st.isSymbolicLink()) {
        this.set({ path: target, type: 'symlink', mode: 0o777, uid: 0, gid: 0, target: readlinkSync(abs) });
      } else if (st.isFile()) {
        this.copyFile(target, abs);
      }
    };
    walk('');
  }

  text(path: string, content: string, mode = 0o644): void {
    this.set({ path, type: 'file', mode, uid: 0, gid: 0, data: () => Buffer.from(content, 'utf8') });
  }

  sorted(): TarEntry[] {
    const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));
    return [...this.entries.values()].sort((a, b) => byteOrder(a.path, b.path));
  }
}

function debsDir(root: string, log: (m: string) => void): string {
  const result = spawnSync('bash', [join(root, 'hack', 'image', 'debs.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const dir = result.stdout.trim().split('\n').pop() ?? '';
  if (result.status !== 0 || dir === '' || !existsSync(dir))
    throw new Error(`hack/image/debs.sh failed (exit ${result.status}); see the messages above`);
  log(`[image] Debian packages from ${dir}`);
  return dir;
}

/** Adds a .deb's files (its data archive, modes as packaged) and its dpkg status entry. Returns "name=version". */
function addDeb(tree: Tree, deb: string): string {
  const control = execFileSync('dpkg-deb', ['-f', deb], { encoding: 'utf8' });
  const field = (name: string): string => new RegExp(`^${name}: (.*)$`, 'm').exec(control)?.[1]?.trim() ?? '';
  const name = field('Package');
  const version = field('Version');
  const entries = readTar(execFileSync('dpkg-deb', ['--fsys-tarfile', deb], { maxBuffer: 1 << 30 }));
  const byPath = new Map(entries.map((e) => [e.path, e]));
  for (const e of entries) {
    if (e.path === '' || e.path === '.') continue;
    if (e.type === 'dir') tree.set({ path: e.path, type: 'dir', mode: e.mode, uid: 0, gid: 0 });
    else if (e.type === 'file') tree.set({ path: e.path, type: 'file', mode: e.mode, uid: 0, gid: 0, data: () => e.data });
    else if (e.type === 'symlink') tree.set({ path: e.path, type: 'symlink', mode: 0o777, uid: 0, gid: 0, target: e.target });
    else if (e.type === 'hardlink') {
      const target = byPath.get(e.target.replace(/^\.\//, ''));
      if (target?.type !== 'file') throw new Error(`${deb}: hard link ${e.path} to ${e.target}, not a file of the package`);
      tree.set({ path: e.path, type: 'file', mode: e.mode, uid: 0, gid: 0, data: () => target.data });
    } else throw new Error(`${deb}: ${e.path} is neither a file, a directory nor a link`);
  }
  // Where distroless images record their packages, so image scanners find them.
  const status = control.replace(/^(Package: .*\n)/m, '$1Status: install ok installed\n');
  tree.text(`var/lib/dpkg/status.d/${name}`, status.endsWith('\n') ? status : `${status}\n`);
  return `${name}=${version}`;
}

function baseLayerTree(
  root: string,
  arch: { oci: string; node: string },
  log: (m: string) => void,
): { tree: Tree; packages: string[]; nodeVersion: string; osRelease: Record<string, string> } {
  const tree = new Tree();
  const dir = debsDir(root, log);
  const packages = readdirSync(dir)
    .filter((f) => f.endsWith('.deb'))
    .sort()
    .map((f) => addDeb(tree, join(dir, f)));

  // update-ca-certificates' bundle, made the way it makes it: every Mozilla certificate, in name order.
  const mozilla = 'usr/share/ca-certificates/mozilla';
  const certs = tree
    .sorted()
    .filter(
      (e): e is Extract<TarEntry, { type: 'file' }> => e.type === 'file' && e.path.startsWith(`${mozilla}/`) && e.path.endsWith('.crt'),
    );
  if (certs.length === 0) throw new Error('no CA certificates in the ca-certificates package');
  tree.set({
    path: 'etc/ssl/certs/ca-certificates.crt',
    type: 'file',
    mode: 0o644,
    uid: 0,
    gid: 0,
    data: () =>
      Buffer.concat(
        certs.map((c) => {
          const d = c.data();
          return d[d.length - 1] === 0x0a ? d : Buffer.concat([d, Buffer.from('\n')]);
        }),
      ),
  });

  // The release the packages come from (this machine's: debs.sh asks its apt).
  const osReleaseText = readFileSync(realpathSync('/etc/os-release'), 'utf8');
  const osRelease = Object.fromEntries(
    osReleaseText.split('\n').flatMap((l) => {
      const m = /^([A-Z_]+)=("?)(.*)\2$/.exec(l);
      return m ? [[m[1]!, m[3]!]] : [];
    }),
  );
  if (osRelease.ID !== 'debian')
    throw new Error(
      `the image's base is made of Debian packages from this machine's apt; this machine is ${osRelease.ID ?? 'unknown'}, not Debian`,
    );
  tree.text('etc/os-release', osReleaseText);
  if (existsSync('/etc/debian_version')) tree.text('etc/debian_version', readFileSync('/etc/debian_version', 'utf8'));
  tree.text(
    'etc/passwd',
    [
      'root:x:0:0:root:/root:/sbin/nologin',
      'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin',
      `nonroot:x:${IMAGE_UID}:${IMAGE_UID}:nonroot:/home/nonroot:/sbin/nologin`,
      '',
    ].join('\n'),
  );
  tree.text('etc/group', ['root:x:0:', 'nobody:x:65534:', `nonroot:x:${IMAGE_UID}:`, ''].join('\n'));
  tree.text(
    'etc/nsswitch.conf',
    [
      'passwd: files',
      'group: files',
      'shadow: files',
      'hosts: files dns',
      'networks: files',
      'protocols: files',
      'services: files',
      '',
    ].join('\n'),
  );
  tree.set({ path: 'tmp', type: 'dir', mode: 0o1777, uid: 0, gid: 0 });
  tree.set({ path: 'root', type: 'dir', mode: 0o700, uid: 0, gid: 0 });
  tree.set({ path: 'home/nonroot', type: 'dir', mode: 0o700, uid: IMAGE_UID, gid: IMAGE_UID });

  // The pinned Node: the `node` devDependency's binary, the release the tests run on.
  const pinned = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> })
    .devDependencies.node;
  const nodePkg = join(root, 'node_modules', 'node');
  const nodeVersion = (JSON.parse(readFileSync(join(nodePkg, 'package.json'), 'utf8')) as { version: string }).version;
  if (pinned !== nodeVersion)
    throw new Error(`node_modules/node is ${nodeVersion}, package.json pins ${pinned ?? '(none)'}: run npm install`);
  const binary = join(nodePkg, 'bin', 'node');
  const reported = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  if (reported !== `v${nodeVersion}`) throw new Error(`${binary} says ${reported}, expected v${nodeVersion}`);
  tree.copyFile('usr/local/bin/node', binary);
  const license = [
    join(nodePkg, 'node_modules', `node-${arch.node}`, 'LICENSE'),
    join(root, 'node_modules', `node-${arch.node}`, 'LICENSE'),
  ].find((p) => existsSync(p));
  if (license) tree.copyFile('usr/local/share/doc/node/LICENSE', license);
  return { tree, packages, nodeVersion, osRelease };
}

/** Every compiled module of src/ (a .js for each .ts), checked to be newer than its source. */
function compiledSources(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, 'src', rel)).sort()) {
      const child = rel === '' ? name : `${rel}/${name}`;
      const abs = join(root, 'src', child);
      if (statSync(abs).isDirectory()) walk(child);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) {
        const js = join(root, 'dist', 'src', child.replace(/\.ts$/, '.js'));
        if (!existsSync(js) || statSync(js).mtimeMs < statSync(abs).mtimeMs)
          throw new Error(`dist/src/${child.replace(/\.ts$/, '.js')} is missing or older than src/${child}: run npm run build`);
        out.push(child.replace(/\.ts$/, '.js'));
      }
    }
  };
  walk('');
  return out;
}

function appLayerTree(root: string): { tree: Tree; modules: number } {
  const tree = new Tree();
  tree.copyFile('app/package.json', join(root, 'package.json'));
  tree.copyTree('app/crds', join(root, 'crds'));
  for (const js of compiledSources(root)) tree.copyFile(`app/dist/src/${js}`, join(root, 'dist', 'src', js));
  // Production packages: the lock file's entries not marked dev, where npm put them.
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; dev?: boolean; optional?: boolean; link?: boolean }>;
  };
  let modules = 0;
  for (const [path, meta] of Object.entries(lock.packages).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (path === '' || meta.dev === true) continue;
    if (meta.link) throw new Error(`package-lock.json: ${path} is a link; the image copies installed packages only`);
    const dir = join(root, path);
    if (!existsSync(join(dir, 'package.json'))) {
      if (meta.optional) continue; // another platform's optional binding, not installed here
      throw new Error(`${path} (a production dependency) is not installed: run npm install`);
    }
    const installed = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version;
    if (meta.version !== undefined && installed !== meta.version)
      throw new Error(`${path} is ${installed ?? '?'}, package-lock.json says ${meta.version}: run npm install`);
    // Nested node_modules are entries of their own in the lock file; .bin holds links to tools.
    tree.copyTree(`app/${path}`, dir, (rel) => rel === 'node_modules' || rel.startsWith('node_modules/') || rel === '.bin');
    modules++;
  }
  return { tree, modules };
}

/** Writes one layer: the tar (for its diff_id), then `gzip -n` of it as the blob. */
function writeLayer(work: string, name: string, tree: Tree, mtime: number, createdBy: string): Layer {
  const tarPath = join(work, `${name}.tar`);
  const tar = new TarWriter(tarPath, mtime);
  for (const entry of tree.sorted()) tar.add(entry);
  const { sha256: diff } = tar.finish();
  const gzPath = join(work, `${name}.tar.gz`);
  const fd = openSync(gzPath, 'w');
  try {
    const gz = spawnSync('gzip', ['-n', '-6', '-c', tarPath], { stdio: ['ignore', fd, 'inherit'] });
    if (gz.status !== 0) throw new Error(`gzip exited ${gz.status}`);
  } finally {
    closeSync(fd);
  }
  rmSync(tarPath);
  const gzHash = sha256(readFileSync(gzPath));
  return {
    blob: { sha256: gzHash, data: () => readFileSync(gzPath) },
    descriptor: { mediaType: MediaTypes.layerGzip, digest: `sha256:${gzHash}`, size: statSync(gzPath).size },
    diffId: `sha256:${diff}`,
    createdBy,
  };
}

export function buildImage(opts: BuildOptions = {}): BuildResult {
  const log = opts.log ?? ((m: string) => console.error(m));
  const root = repoRoot();
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    description?: string;
    license?: string;
  };
  const arch = ARCH[process.arch];
  if (!arch) throw new Error(`no image for ${process.arch}: the builder knows ${Object.keys(ARCH).join(', ')}`);
  // Outside a git checkout (and without SOURCE_DATE_EPOCH) the epoch is 0: still the same bytes every time.
  const epochText = process.env.SOURCE_DATE_EPOCH ?? git(root, ['log', '-1', '--format=%ct']) ?? '0';
  const epoch = Number(epochText);
  if (!Number.isInteger(epoch) || epoch < 0) throw new Error(`SOURCE_DATE_EPOCH ${epochText} is not a Unix time`);
  const created = new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z');
  const revision = process.env.SOURCE_REVISION ?? git(root, ['rev-parse', 'HEAD']);
  if (revision === undefined) log('[image] not a git checkout: no revision label, and the epoch is SOURCE_DATE_EPOCH or 0');

  const work = mkdtempSync(join(tmpdir(), 'bundlesmith-image-'));
  try {
    const started = Date.now();
    const base = baseLayerTree(root, arch, log);
    const app = appLayerTree(root);
    const baseRelease = `debian:${base.osRelease.VERSION_CODENAME ?? base.osRelease.VERSION_ID ?? ''}`;
    const layers = [
      writeLayer(
        work,
        'base',
        base.tree,
        epoch,
        `hack/image/build.ts: ${baseRelease} packages ${base.packages.join(' ')}; node v${base.nodeVersion}; nonroot user ${IMAGE_UID}`,
      ),
      writeLayer(
        work,
        'app',
        app.tree,
        epoch,
        `hack/image/build.ts: /app (${pkg.name} ${pkg.version}, ${app.modules} production packages)`,
      ),
    ];
    log(
      `[image] layers written in ${((Date.now() - started) / 1000).toFixed(1)} s: ${layers.map((l) => `${l.descriptor.digest.slice(0, 19)} ${(l.descriptor.size / 1e6).toFixed(1)} MB`).join(', ')}`,
    );

    const labels: Record<string, string> = {
      'org.opencontainers.image.title': pkg.name,
      'org.opencontainers.image.description': pkg.description ?? '',
      'org.opencontainers.image.version': pkg.version,
      ...(revision !== undefined ? { 'org.opencontainers.image.revision': revision } : {}),
      'org.opencontainers.image.created': created,
      'org.opencontainers.image.licenses': pkg.license ?? '',
      'bundlesmith.image.node-version': base.nodeVersion,
      'bundlesmith.image.debian-packages': `${baseRelease} ${base.packages.join(' ')}`,
    };
    const config: ImageConfig = {
      created,
      architecture: arch.oci,
      os: 'linux',
      config: {
        User: `${IMAGE_UID}:${IMAGE_UID}`,
        Env: [
          'PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin',
          'NODE_ENV=production',
          'SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt',
        ],
        Entrypoint: ENTRYPOINT,
        WorkingDir: '/app',
        ExposedPorts: { '8080/tcp': {}, '8081/tcp': {} },
        Labels: labels,
        StopSignal: 'SIGTERM',
      },
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
      history: layers.map((l) => ({ created, created_by: l.createdBy })),
    };
    const configJson = canonicalJson(config);
    const configBlob: Blob = { sha256: sha256(configJson), data: () => configJson };
    const manifest: Manifest = {
      schemaVersion: 2,
      mediaType: MediaTypes.manifest,
      config: { mediaType: MediaTypes.config, digest: `sha256:${configBlob.sha256}`, size: configJson.length },
      layers: layers.map((l) => l.descriptor),
      annotations: {
        'org.opencontainers.image.created': created,
        'org.opencontainers.image.version': pkg.version,
        ...(revision !== undefined ? { 'org.opencontainers.image.revision': revision } : {}),
      },
    };
    const manifestJson = canonicalJson(manifest);
    const manifestBlob: Blob = { sha256: sha256(manifestJson), data: () => manifestJson };
    const index: Index = {
      schemaVersion: 2,
      mediaType: MediaTypes.index,
      manifests: [
        {
          mediaType: MediaTypes.manifest,
          digest: `sha256:${manifestBlob.sha256}`,
          size: manifestJson.length,
          annotations: { 'org.opencontainers.image.ref.name': pkg.version },
          platform: { architecture: arch.oci, os: 'linux' },
        },
      ],
    };
    const outDir = opts.outDir ?? join(root, 'dist', 'image');
    mkdirSync(outDir, { recursive: true });
    const archive = join(outDir, `${pkg.name}-${pkg.version}.oci.tar`);
    const partial = join(work, 'image.oci.tar');
    const written = writeOciArchive(partial, index, [...layers.map((l) => l.blob), configBlob, manifestBlob], epoch);
    renameOrCopy(partial, archive);
    log(
      `[image] ${relative(process.cwd(), archive) || archive}: manifest ${index.manifests[0]!.digest}, archive sha256:${written.sha256} (${(written.size / 1e6).toFixed(1)} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return { archive, archiveSha256: written.sha256, manifestDigest: index.manifests[0]!.digest, version: pkg.version };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function renameOrCopy(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch {
    // Another filesystem: copy next to the target, then rename there (never a half-written archive at `to`).
    execFileSync('cp', [from, `${to}.partial`]);
    renameSync(`${to}.partial`, to);
  }
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(new URL(import.meta.url).pathname)) {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const unknown = args.filter((a, i) => a !== '--out' && i !== outAt + 1);
  if (unknown.length > 0 || (outAt !== -1 && args[outAt + 1] === undefined)) {
    console.error('usage: build.js [--out DIR]');
    process.exit(2);
  }
  try {
    const result = buildImage(outAt !== -1 ? { outDir: args[outAt + 1]! } : {});
    console.log(JSON.stringify(result));
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
