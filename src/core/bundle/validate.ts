/**
 * Checks a parsed Bundle spec for everything that the schema cannot see.
 * Each issue names the resource (and the reference or field) concerned.
 * Issues are terminal (the spec must change) except for unknown kinds,
 * which are retriable because the CRD may be installed later.
 */
import { readDelayText } from '../softdelete/rules.js';
import type { BundleSpec } from '../../api/bundle.js';
import type { Resource } from '../../api/resource.js';
import { Annotations, BUNDLE_KIND, GROUP } from '../../api/names.js';
import { driftControlIssues } from './drift-controls.js';
import { buildGraph, findCycles, formatCycle } from './graph.js';
import { healthCheckIssues } from './health-checks.js';
import type { KindTable } from './kinds.js';
import { describeObject, groupOf, isRequestableName, keyGroupOf, kindKey } from './objects.js';
import { parsePath } from './path.js';
import { findPlaceholders, placeholderName } from './references.js';

export interface ValidationIssue {
  /** The resource concerned; absent for issues about the whole Bundle. */
  resource?: string;
  message: string;
  /** True when the same spec may become valid without an edit (e.g. a CRD gets installed). */
  retriable: boolean;
}

export interface BundleRef {
  name: string;
  namespace: string;
}

/**
 * How deep an object may nest (maps and lists). Kubernetes objects stay far
 * below; a deeper one is refused before any recursive walk (placeholders,
 * hashing) can exhaust the stack.
 */
export const MAX_OBJECT_DEPTH = 100;

export function validateBundle(bundle: BundleRef, spec: BundleSpec, kinds: KindTable): ValidationIssue[] {
  const names = new Set(spec.resources.map((r) => r.name));
  const drift = driftControlIssues(spec).map((i): ValidationIssue => ({ ...i, retriable: false }));
  return [
    ...deletionDefaultsIssues(spec),
    ...drift,
    ...healthCheckIssues(spec.healthChecks, 'spec.healthChecks').map((message) => ({ message, retriable: false })),
    ...duplicateNames(spec.resources),
    ...duplicateObjects(spec.resources),
    ...spec.resources.flatMap((r) => validateResource(bundle, r, names, kinds)),
    ...cycles(spec.resources),
  ];
}

/** The defaults' delay must read as a Go duration (policy and gate are enums the schema checks). */
function deletionDefaultsIssues(spec: BundleSpec): ValidationIssue[] {
  const text = spec.deletionDefaults?.deletionDelay;
  if (text === undefined) return [];
  const delay = readDelayText(text, 'spec.deletionDefaults.deletionDelay');
  return delay.ok ? [] : [{ message: delay.message, retriable: false }];
}

/** How deep a JSON value nests (a scalar: 0), counted without recursion; stops counting past `limit`. */
export function nestingDepth(value: unknown, limit = MAX_OBJECT_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() ?? [undefined, 0];
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > deepest) deepest = depth + 1;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return deepest;
}

export function formatIssue(issue: ValidationIssue): string {
  return issue.resource === undefined ? issue.message : `resource "${issue.resource}": ${issue.message}`;
}

function terminal(resource: string, message: string): ValidationIssue {
  return { resource, message, retriable: false };
}

function duplicateNames(resources: readonly Resource[]): ValidationIssue[] {
  const positions = new Map<string, number[]>();
  resources.forEach((r, i) => {
    const at = positions.get(r.name);
    if (at) at.push(i);
    else positions.set(r.name, [i]);
  });
  return [...positions]
    .filter(([, at]) => at.length > 1)
    .map(([name, at]) => terminal(name, `name is used by ${at.length} resources (${at.map((i) => `resources[${i}]`).join(', ')})`));
}

function duplicateObjects(resources: readonly Resource[]): ValidationIssue[] {
  const owners = new Map<string, string[]>();
  for (const r of resources) {
    const o = r.spec.object;
    if (o === undefined) continue;
    const key = `${keyGroupOf(groupOf(o.apiVersion), o.kind)}/${o.kind}/${o.metadata.name}`;
    const names = owners.get(key);
    if (names) names.push(r.name);
    else owners.set(key, [r.name]);
  }
  return [...owners.values()]
    .filter((names) => names.length > 1)
    .map((names) => {
      const first = resources.find((r) => r.name === names[0])?.spec.object;
      const what = first === undefined ? 'the same object' : describeObject(first);
      return terminal(names[1] ?? '', `defines ${what}, already defined by resource "${names[0] ?? ''}"`);
    });
}

function cycles(resources: readonly Resource[]): ValidationIssue[] {
  const graph = buildGraph(
    resources.map((r) => r.name),
    resources.flatMap((r) => (r.references ?? []).map((ref) => [r.name, ref.resource] as const)),
  );
  return findCycles(graph).map((cycle) => terminal(cycle[0] ?? '', `reference cycle: ${formatCycle(cycle)}`));
}

function validateResource(bundle: BundleRef, resource: Resource, names: ReadonlySet<string>, kinds: KindTable): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const add = (message: string): void => void issues.push(terminal(resource.name, message));

  const refNames = new Map<string, number>();
  (resource.references ?? []).forEach((ref, i) => {
    const label = ref.name === undefined ? `references[${i}]` : `reference "${ref.name}"`;
    if (!names.has(ref.resource)) add(`${label} refers to resource "${ref.resource}", which is not in the Bundle`);
    if (ref.modifier !== undefined) add(`${label} has modifier "${ref.modifier}": modifiers are not supported`);
    if (ref.name !== undefined) {
      refNames.set(ref.name, (refNames.get(ref.name) ?? 0) + 1);
      if (ref.path === undefined) add(`${label} has a name but no path`);
    }
    if (ref.path !== undefined) {
      const parsed = parsePath(ref.path);
      if (!parsed.ok) add(`${label}: ${parsed.message}`);
    }
  });
  for (const [name, count] of refNames) if (count > 1) add(`reference name "${name}" is used ${count} times`);

  if (resource.spec.plugin !== undefined) add(`spec.plugin ("${resource.spec.plugin.name}") is not supported; use spec.object`);
  const object = resource.spec.object;
  if (object === undefined) {
    if (resource.spec.plugin === undefined) add('spec has neither object nor plugin');
    return issues;
  }

  if (nestingDepth(object) > MAX_OBJECT_DEPTH) {
    add(`object nests deeper than ${MAX_OBJECT_DEPTH} levels: refused (no Kubernetes object needs that)`);
    return issues;
  }
  for (const [field, value] of [
    ['apiVersion', object.apiVersion],
    ['kind', object.kind],
    ['metadata.name', object.metadata.name],
  ] as const) {
    if (placeholderName(value) !== undefined) add(`object ${field} cannot be a reference placeholder ("${value}")`);
  }
  const name = object.metadata.name;
  // The apiserver's path-segment rule: such a name cannot be requested at all (".." would name the collection above).
  if (!isRequestableName(name))
    add(`object metadata.name ${JSON.stringify(name)} cannot be a Kubernetes object name (not ".", "..", nor containing "/" or "%")`);
  if (groupOf(object.apiVersion) === GROUP && object.kind === BUNDLE_KIND)
    add('a Bundle cannot list a Bundle (its objects would be reconciled by the operator twice, under two owners)');
  for (const at of placeholderKeys(object)) add(`placeholder used as a key at ${at}: placeholders are substituted in values only`);
  for (const problem of nonStringData(object)) add(problem);
  const namespace = object.metadata.namespace;
  if (namespace !== undefined && namespace !== bundle.namespace)
    add(`object namespace "${namespace}" differs from the Bundle's namespace "${bundle.namespace}"`);

  const kind = kinds.get(kindKey(object.apiVersion, object.kind));
  if (kind === undefined)
    issues.push({
      resource: resource.name,
      message: `kind ${object.kind} of ${object.apiVersion} is not known to the API server (is its CRD installed?)`,
      retriable: true,
    });
  else if (!kind.namespaced) add(`${object.kind} is cluster-scoped: a namespaced Bundle cannot own it`);

  for (const owner of object.metadata.ownerReferences ?? []) {
    if (owner.controller === true)
      add(`object has an ownerReference with controller: true (${owner.kind} ${owner.name}); the Bundle must be the controller`);
  }
  if (object.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined)
    add(`object carries the ${Annotations.deletionTimestamp} annotation, which only the operator may set`);
  // An approval applied with the object would outlive its removal from the spec and approve a countdown that had not begun yet.
  if (object.metadata.annotations?.[Annotations.deletionApproved] !== undefined)
    add(
      `object carries the ${Annotations.deletionApproved} annotation, which approves one countdown on the live object (bundlesmith approve) and cannot be part of a Bundle`,
    );
  if (object.metadata.annotations?.[Annotations.releaseProof] !== undefined)
    add(`object carries the ${Annotations.releaseProof} annotation, which only the operator may set`);

  for (const use of findPlaceholders(object)) {
    if (!refNames.has(use.name)) add(`placeholder "!{${use.name}}" at ${use.at} names no reference of this resource`);
  }
  return issues;
}

/** Where a key of the object has the placeholder form `!{name}` (iteratively: the depth is bounded but may still be 100). */
function placeholderKeys(object: unknown): string[] {
  const out: string[] = [];
  const stack: [unknown, string][] = [[object, '']];
  while (stack.length > 0) {
    const [value, at] = stack.pop() ?? [undefined, ''];
    if (Array.isArray(value)) value.forEach((item, i) => stack.push([item, `${at}[${i}]`]));
    else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const path = at === '' ? key : `${at}.${key}`;
        if (placeholderName(key) !== undefined) out.push(path);
        stack.push([item, path]);
      }
    }
  }
  return out.sort();
}

/**
 * ConfigMap data/binaryData and Secret data/stringData hold strings only. The
 * apiserver refuses a number in most of them, but server-side apply drops one
 * in a Secret's stringData without a word; say it for all of them.
 */
function nonStringData(object: { apiVersion: string; kind: string } & Record<string, unknown>): string[] {
  if (object.apiVersion !== 'v1') return [];
  const fields = object.kind === 'ConfigMap' ? ['data', 'binaryData'] : object.kind === 'Secret' ? ['data', 'stringData'] : [];
  const out: string[] = [];
  for (const field of fields) {
    const map = object[field];
    // null is absent: server-side apply of a Bundle can store an emptied map as null, and the apiserver takes it so.
    if (map === undefined || map === null) continue;
    if (typeof map !== 'object' || Array.isArray(map)) {
      out.push(`${field} must be a map of strings`);
      continue;
    }
    for (const [key, value] of Object.entries(map)) {
      if (typeof value !== 'string')
        out.push(
          `${field}.${key} is ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}: ${object.kind} ${field} values must be strings (quote it: "${String(JSON.stringify(value)).slice(0, 40)}")`,
        );
    }
  }
  return out;
}
