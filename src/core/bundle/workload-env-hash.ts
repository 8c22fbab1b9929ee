/**
 * Where a workload keeps its pod template, and the envRefHash written there
 * (see env-ref-hash.ts for the hash itself): the pass decides, per resource,
 * whether its template gets the annotation, keeps the live one, or waits for
 * a ConfigMap or Secret it reads. Pure: the data of the ConfigMaps and
 * Secrets comes in through a lookup.
 */
import type { KubeObjectManifest, Resource } from '../../api/resource.js';
import { Annotations } from '../../api/names.js';
import {
  ENV_REF_HASH_DISABLED,
  envRefHash,
  envSourceRefs,
  type EnvSourceRef,
  type SourceLookup,
  type SourceOptions,
} from './env-ref-hash.js';
import { cloneJson, groupOf, isRecord, type JsonRecord, type LiveObject } from './objects.js';
import { resolveObject } from './references.js';

/** The value of Annotations.rollOnChange that adds mounted ConfigMaps and Secrets to the hash. */
export const ROLL_ON_CHANGE_VOLUMES = 'volumes';

/** A name an object can have (a DNS subdomain), so a request can carry it. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * The path to the pod template of the workload kinds that have one. A Job's
 * template is immutable once created; a CronJob's is the template of the Jobs
 * it creates next.
 */
function templatePath(apiVersion: string, kind: string): readonly string[] | undefined {
  const group = groupOf(apiVersion);
  if (group === 'apps' && (kind === 'Deployment' || kind === 'StatefulSet' || kind === 'DaemonSet' || kind === 'ReplicaSet'))
    return ['spec', 'template'];
  if (group === 'batch' && kind === 'Job') return ['spec', 'template'];
  if (group === 'batch' && kind === 'CronJob') return ['spec', 'jobTemplate', 'spec', 'template'];
  return undefined;
}

function at(root: unknown, path: readonly string[]): unknown {
  let v = root;
  for (const segment of path) v = isRecord(v) ? v[segment] : undefined;
  return v;
}

function sourceOptions(object: { metadata: { annotations?: Record<string, string> | undefined } }): SourceOptions {
  const roll = object.metadata.annotations?.[Annotations.rollOnChange];
  return roll === undefined ? {} : { volumes: roll.split(',').some((part) => part.trim() === ROLL_ON_CHANGE_VOLUMES) };
}

/** Whether the template's author turned the hash off, as in Smith: the annotation set to "disabled" in the manifest. */
function isDisabled(template: unknown): boolean {
  const annotations = isRecord(template) && isRecord(template['metadata']) ? template['metadata']['annotations'] : undefined;
  return isRecord(annotations) && annotations[Annotations.envRefHash] === ENV_REF_HASH_DISABLED;
}

/** The ConfigMaps and Secrets a manifest's pod template reads (none for other kinds, or with the hash disabled). */
export function workloadSourceRefs(object: KubeObjectManifest): EnvSourceRef[] {
  const path = templatePath(object.apiVersion, object.kind);
  if (path === undefined) return [];
  const template = at(object, path);
  if (isDisabled(template)) return [];
  return envSourceRefs(at(template, ['spec']), sourceOptions(object));
}

export type EnvHashDecision =
  /** Not a workload with a pod template, or the hash is disabled: the object as it is. */
  | { kind: 'unchanged' }
  /** The object with the template's annotation set (to the hash, or to the live value a Job's immutable template has). */
  | { kind: 'stamped'; object: KubeObjectManifest }
  /** A ConfigMap or Secret it must read is missing: the workload waits for it. */
  | { kind: 'missing'; message: string };

function withTemplateAnnotation(object: KubeObjectManifest, path: readonly string[], value: string | undefined): KubeObjectManifest {
  const copy = cloneJson(object);
  let parent: JsonRecord = copy;
  for (const segment of path) {
    const next = parent[segment];
    if (!isRecord(next)) return copy; // no template to write on: the server will say what is wrong with it
    parent = next;
  }
  const metadata = isRecord(parent['metadata']) ? parent['metadata'] : (parent['metadata'] = {});
  const annotations = isRecord(metadata['annotations']) ? { ...metadata['annotations'] } : {};
  if (value === undefined) delete annotations[Annotations.envRefHash];
  else annotations[Annotations.envRefHash] = value;
  metadata['annotations'] = annotations;
  return copy;
}

/**
 * The envRefHash for a workload manifest. A Job that exists keeps what its
 * template has (the API refuses a change to it): the hash of a changed
 * ConfigMap reaches the next Job, not a running one.
 */
export function decideEnvRefHash(object: KubeObjectManifest, live: LiveObject | undefined, lookup: SourceLookup): EnvHashDecision {
  const path = templatePath(object.apiVersion, object.kind);
  if (path === undefined) return { kind: 'unchanged' };
  const template = at(object, path);
  if (!isRecord(template) || isDisabled(template)) return { kind: 'unchanged' };
  if (live !== undefined && groupOf(object.apiVersion) === 'batch' && object.kind === 'Job') {
    const liveAnnotations = at(live, [...path, 'metadata', 'annotations']);
    const liveValue = isRecord(liveAnnotations) ? liveAnnotations[Annotations.envRefHash] : undefined;
    return { kind: 'stamped', object: withTemplateAnnotation(object, path, typeof liveValue === 'string' ? liveValue : undefined) };
  }
  const hashed = envRefHash(template['spec'], lookup, sourceOptions(object));
  if (!hashed.ok) return { kind: 'missing', message: hashed.message };
  // A template that reads nothing gets no annotation, where Smith writes the hash of nothing on every Deployment: the value Smith
  // wrote stays on a workload moved from it (server-side apply leaves another manager's field), and no other workload rolls on upgrade.
  if (hashed.sources.length === 0) return { kind: 'unchanged' };
  return { kind: 'stamped', object: withTemplateAnnotation(object, path, hashed.hash) };
}

/**
 * The distinct ConfigMaps and Secrets the Bundle's workloads read, to be
 * read before the plan (PlanInput.envSources). Names given by a reference
 * ("!{config-name}") are resolved against the live objects of the
 * references, as the plan resolves them; a workload whose references do not
 * resolve yet waits for them anyway, and its sources are read on a later pass.
 */
export function envSourcesOf(
  resources: readonly Resource[],
  live: ReadonlyMap<string, LiveObject>,
): { kind: EnvSourceRef['kind']; name: string }[] {
  const seen = new Map<string, { kind: EnvSourceRef['kind']; name: string }>();
  for (const r of resources) {
    const object = r.spec.object;
    if (object === undefined || templatePath(object.apiVersion, object.kind) === undefined) continue;
    const resolved = (r.references ?? []).length > 0 ? resolveObject(object, r, (name) => live.get(name)) : { ok: true as const, object };
    if (!resolved.ok) continue;
    for (const ref of workloadSourceRefs(resolved.object)) {
      if (OBJECT_NAME.test(ref.name) && ref.name.length <= 253) seen.set(`${ref.kind}/${ref.name}`, { kind: ref.kind, name: ref.name });
    }
  }
  return [...seen.values()];
}
