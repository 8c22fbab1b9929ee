/**
 * Smith's `smith.atlassian.com/envRefHash`: a SHA-256 over what a pod
 * template's containers read from ConfigMaps and Secrets through the
 * environment, written on the template so that a changed ConfigMap or
 * Secret rolls the Pods. The algorithm is Smith's exactly, so that a
 * workload moved from Smith does not roll on the switch:
 *  - containers first, then init containers; in each, every `envFrom`
 *    entry (its secretRef, then its configMapRef), then every `env` entry
 *    with a `valueFrom` (its secretKeyRef, then its configMapKeyRef);
 *  - for each source, its keys (all of them for envFrom, the one key for a
 *    keyRef) sorted, each written as key, NUL, value bytes, NUL; a
 *    ConfigMap's binaryData counts with its data;
 *  - a missing optional source, or an optional keyRef whose key is missing,
 *    adds nothing; a missing required one is an error (the workload waits).
 * Pure: the live ConfigMaps and Secrets come in through `lookup`.
 */
import { createHash, type Hash } from 'node:crypto';
import { isRecord } from './objects.js';

export const ENV_REF_HASH_DISABLED = 'disabled';

/** The bytes of each key of a live ConfigMap or Secret. */
export type SourceData = ReadonlyMap<string, Uint8Array>;

export type SourceLookup = (kind: 'ConfigMap' | 'Secret', name: string) => SourceData | undefined;

export interface EnvSourceRef {
  kind: 'ConfigMap' | 'Secret';
  name: string;
  /** The one key a keyRef reads; undefined: every key (envFrom), or `keys`. */
  key?: string;
  /** The keys a volume's `items` project (rollOnChange: volumes); undefined: every key. */
  keys?: readonly string[];
  optional: boolean;
}

export type EnvRefHash = { ok: true; hash: string; sources: EnvSourceRef[] } | { ok: false; message: string; sources: EnvSourceRef[] };

function refOf(kind: 'ConfigMap' | 'Secret', value: unknown, withKey: boolean): EnvSourceRef | undefined {
  if (!isRecord(value) || typeof value['name'] !== 'string') return undefined;
  const key = value['key'];
  if (withKey && typeof key !== 'string') return undefined;
  return { kind, name: value['name'], ...(withKey && typeof key === 'string' ? { key } : {}), optional: value['optional'] === true };
}

function containerRefs(containers: unknown): EnvSourceRef[] {
  const out: EnvSourceRef[] = [];
  for (const c of Array.isArray(containers) ? containers : []) {
    if (!isRecord(c)) continue;
    for (const e of Array.isArray(c['envFrom']) ? c['envFrom'] : []) {
      if (!isRecord(e)) continue;
      const secret = refOf('Secret', e['secretRef'], false);
      if (secret) out.push(secret);
      const configMap = refOf('ConfigMap', e['configMapRef'], false);
      if (configMap) out.push(configMap);
    }
    for (const e of Array.isArray(c['env']) ? c['env'] : []) {
      const from = isRecord(e) ? e['valueFrom'] : undefined;
      if (!isRecord(from)) continue;
      const secret = refOf('Secret', from['secretKeyRef'], true);
      if (secret) out.push(secret);
      const configMap = refOf('ConfigMap', from['configMapKeyRef'], true);
      if (configMap) out.push(configMap);
    }
  }
  return out;
}

/** One volume source (a configMap or secret volume, or a projected source): its name field differs by kind. */
function volumeSourceRef(kind: 'ConfigMap' | 'Secret', value: unknown, nameField: 'name' | 'secretName'): EnvSourceRef | undefined {
  if (!isRecord(value) || typeof value[nameField] !== 'string') return undefined;
  const items = Array.isArray(value['items'])
    ? value['items'].flatMap((i) => (isRecord(i) && typeof i['key'] === 'string' ? [i['key']] : []))
    : undefined;
  return {
    kind,
    name: value[nameField],
    ...(items !== undefined && items.length > 0 ? { keys: items } : {}),
    optional: value['optional'] === true,
  };
}

/**
 * ConfigMaps and Secrets mounted as volumes, directly or projected, in
 * volume order. Beyond Smith (which hashes the environment only), behind
 * `rollOnChange: volumes`: a mounted file is updated in place by the kubelet,
 * so a program that reads it once would otherwise never see the change.
 */
function volumeRefs(volumes: unknown): EnvSourceRef[] {
  const out: EnvSourceRef[] = [];
  for (const v of Array.isArray(volumes) ? volumes : []) {
    if (!isRecord(v)) continue;
    const direct = volumeSourceRef('ConfigMap', v['configMap'], 'name') ?? volumeSourceRef('Secret', v['secret'], 'secretName');
    if (direct) out.push(direct);
    const projected = isRecord(v['projected']) && Array.isArray(v['projected']['sources']) ? v['projected']['sources'] : [];
    for (const p of projected) {
      if (!isRecord(p)) continue;
      const ref = volumeSourceRef('ConfigMap', p['configMap'], 'name') ?? volumeSourceRef('Secret', p['secret'], 'name');
      if (ref) out.push(ref);
    }
  }
  return out;
}

export interface SourceOptions {
  /** Also the ConfigMaps and Secrets mounted as volumes (after the environment's, so Smith's value stands without them). */
  volumes?: boolean;
}

/** Every ConfigMap and Secret a pod spec's containers, then init containers, read through the environment, in Smith's order; then, on request, its volumes'. */
export function envSourceRefs(podSpec: unknown, options: SourceOptions = {}): EnvSourceRef[] {
  if (!isRecord(podSpec)) return [];
  const env = [...containerRefs(podSpec['containers']), ...containerRefs(podSpec['initContainers'])];
  return options.volumes === true ? [...env, ...volumeRefs(podSpec['volumes'])] : env;
}

/** Hashes the keys a reference reads; false when a key it names is missing. */
function hashSource(h: Hash, data: SourceData, ref: EnvSourceRef): boolean {
  const named = ref.key !== undefined ? [ref.key] : ref.keys;
  const keys = named === undefined ? [...data.keys()] : named.filter((k) => data.has(k));
  if (named !== undefined && keys.length < new Set(named).size) return false;
  // Go's sort.Strings orders by bytes; for these keys (a restricted ASCII set) that is code-unit order.
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const k of keys) {
    h.update(k);
    h.update(Uint8Array.of(0));
    h.update(data.get(k) ?? new Uint8Array());
    h.update(Uint8Array.of(0));
  }
  return true;
}

export function envRefHash(podSpec: unknown, lookup: SourceLookup, options: SourceOptions = {}): EnvRefHash {
  const sources = envSourceRefs(podSpec, options);
  const h = createHash('sha256');
  for (const ref of sources) {
    const data = lookup(ref.kind, ref.name);
    if (data === undefined) {
      if (ref.optional) continue;
      return { ok: false, message: `${ref.kind} "${ref.name}" not found`, sources };
    }
    if (!hashSource(h, data, ref) && !ref.optional) {
      const missing = (ref.key !== undefined ? [ref.key] : (ref.keys ?? [])).filter((k) => !data.has(k));
      return {
        ok: false,
        message: `${missing.length === 1 ? 'key' : 'keys'} ${missing.map((k) => `"${k}"`).join(', ')} not found in ${ref.kind} "${ref.name}"`,
        sources,
      };
    }
  }
  return { ok: true, hash: h.digest('hex'), sources };
}

/** A live ConfigMap's keys as bytes: data as UTF-8, binaryData decoded from base64. */
export function configMapData(o: { data?: unknown; binaryData?: unknown }): SourceData {
  const out = new Map<string, Uint8Array>();
  if (isRecord(o.data)) for (const [k, v] of Object.entries(o.data)) if (typeof v === 'string') out.set(k, Buffer.from(v, 'utf8'));
  if (isRecord(o.binaryData))
    for (const [k, v] of Object.entries(o.binaryData)) if (typeof v === 'string' && !out.has(k)) out.set(k, Buffer.from(v, 'base64'));
  return out;
}

/** A live Secret's keys as bytes (the API serves data base64-encoded; stringData is folded into data on write). */
export function secretData(o: { data?: unknown }): SourceData {
  const out = new Map<string, Uint8Array>();
  if (isRecord(o.data)) for (const [k, v] of Object.entries(o.data)) if (typeof v === 'string') out.set(k, Buffer.from(v, 'base64'));
  return out;
}
