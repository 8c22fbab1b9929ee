/**
 * OCI image layout (image-spec v1.1) as an archive: `oci-layout`,
 * `index.json` and `blobs/sha256/<hex>` in one tar, the form
 * `skopeo copy oci-archive:FILE ...` reads. Written by build.ts and checked
 * structurally by validateOciArchive (used by the image test).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { TarWriter, readTar, type TarEntry } from './tar.js';

export const MediaTypes = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { architecture: string; os: string };
}

export interface ImageConfig {
  created: string;
  architecture: string;
  os: string;
  config: {
    User?: string;
    Env?: string[];
    Entrypoint?: string[];
    Cmd?: string[];
    WorkingDir?: string;
    ExposedPorts?: Record<string, Record<string, never>>;
    Labels?: Record<string, string>;
    StopSignal?: string;
  };
  rootfs: { type: 'layers'; diff_ids: string[] };
  history: { created: string; created_by: string; comment?: string }[];
}

export interface Manifest {
  schemaVersion: 2;
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface Index {
  schemaVersion: 2;
  mediaType?: string;
  manifests: Descriptor[];
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** JSON as it is stored: no whitespace, keys in the order written (the writer builds its objects in a fixed order). */
export function canonicalJson(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export interface Blob {
  sha256: string;
  /** Reads the blob's bytes (large layers stay on disk until written). */
  data: () => Buffer;
}

/**
 * Writes the layout as a tar archive at `path`: directories first, then the
 * blobs in digest order, owner 0, mode 0644/0755, every mtime `mtime`.
 */
export function writeOciArchive(path: string, index: Index, blobs: Blob[], mtime: number): { sha256: string; size: number } {
  const tar = new TarWriter(path, mtime);
  const dir = (p: string): TarEntry => ({ path: p, type: 'dir', mode: 0o755, uid: 0, gid: 0 });
  const file = (p: string, data: () => Buffer): TarEntry => ({ path: p, type: 'file', mode: 0o644, uid: 0, gid: 0, data });
  tar.add(dir('blobs'));
  tar.add(dir('blobs/sha256'));
  const seen = new Set<string>();
  for (const blob of [...blobs].sort((a, b) => a.sha256.localeCompare(b.sha256))) {
    if (seen.has(blob.sha256)) continue;
    seen.add(blob.sha256);
    tar.add(file(`blobs/sha256/${blob.sha256}`, blob.data));
  }
  tar.add(file('index.json', () => canonicalJson(index)));
  tar.add(file('oci-layout', () => canonicalJson({ imageLayoutVersion: '1.0.0' })));
  return tar.finish();
}

export interface ValidatedImage {
  index: Index;
  manifestDigest: string;
  manifest: Manifest;
  config: ImageConfig;
  /** The layers, compressed as stored, in order. */
  layers: Buffer[];
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`invalid OCI archive: ${message}`);
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * Reads an OCI archive and checks it structurally: the layout version, one
 * image manifest in the index, every descriptor's digest and size against
 * its blob, the media types, and the config's diff_ids against the sha256
 * of each layer uncompressed. Throws on the first mismatch.
 */
export function validateOciArchive(path: string): ValidatedImage {
  const entries = readTar(readFileSync(path));
  const files = new Map(entries.filter((e) => e.type === 'file').map((e) => [e.path, e.data]));
  const layout = files.get('oci-layout');
  check(layout, 'no oci-layout file');
  check(
    (JSON.parse(layout.toString('utf8')) as { imageLayoutVersion?: string }).imageLayoutVersion === '1.0.0',
    'oci-layout is not version 1.0.0',
  );
  for (const [name, data] of files) {
    const m = /^blobs\/sha256\/([0-9a-f]{64})$/.exec(name);
    if (m) check(sha256(data) === m[1], `blob ${name} does not hash to its name`);
  }
  const blob = (d: Descriptor, mediaType: string): Buffer => {
    check(d.mediaType === mediaType, `descriptor ${d.digest} has media type ${d.mediaType}, expected ${mediaType}`);
    check(DIGEST.test(d.digest), `malformed digest ${d.digest}`);
    const data = files.get(`blobs/sha256/${d.digest.slice('sha256:'.length)}`);
    check(data, `blob ${d.digest} is missing`);
    check(data.length === d.size, `blob ${d.digest} is ${data.length} bytes, its descriptor says ${d.size}`);
    return data;
  };
  const indexData = files.get('index.json');
  check(indexData, 'no index.json');
  const index = JSON.parse(indexData.toString('utf8')) as Index;
  // The index's mediaType is optional (image-spec 1.0 had none; skopeo 1.9 writes none).
  check(
    index.schemaVersion === 2 && (index.mediaType === undefined || index.mediaType === MediaTypes.index),
    'index.json is not an OCI image index, schemaVersion 2',
  );
  check(index.manifests.length === 1, `index.json lists ${index.manifests.length} manifests, expected one`);
  const manifestDescriptor = index.manifests[0]!;
  const manifest = JSON.parse(blob(manifestDescriptor, MediaTypes.manifest).toString('utf8')) as Manifest;
  check(
    manifest.schemaVersion === 2 && manifest.mediaType === MediaTypes.manifest,
    'the manifest is not an OCI image manifest, schemaVersion 2',
  );
  const config = JSON.parse(blob(manifest.config, MediaTypes.config).toString('utf8')) as ImageConfig;
  // platform is optional in an index (skopeo 1.9 writes none); where given, it must be the config's.
  const platform = manifestDescriptor.platform;
  check(
    platform === undefined || (platform.os === config.os && platform.architecture === config.architecture),
    "the index's platform differs from the config's os/architecture",
  );
  check(config.rootfs?.type === 'layers', 'config rootfs.type is not "layers"');
  check(
    config.rootfs.diff_ids.length === manifest.layers.length,
    `config has ${config.rootfs.diff_ids.length} diff_ids for ${manifest.layers.length} layers`,
  );
  const layers = manifest.layers.map((d, i) => {
    const data = blob(d, MediaTypes.layerGzip);
    const diffId = `sha256:${sha256(gunzipSync(data))}`;
    check(
      diffId === config.rootfs.diff_ids[i],
      `layer ${i} uncompressed is ${diffId}, the config's diff_id says ${config.rootfs.diff_ids[i]}`,
    );
    return data;
  });
  const referenced = new Set([manifestDescriptor.digest, manifest.config.digest, ...manifest.layers.map((d) => d.digest)]);
  for (const name of files.keys()) {
    if (name.startsWith('blobs/')) check(referenced.has(`sha256:${name.slice('blobs/sha256/'.length)}`), `blob ${name} is not referenced`);
  }
  return { index, manifestDigest: manifestDescriptor.digest, manifest, config, layers };
}
