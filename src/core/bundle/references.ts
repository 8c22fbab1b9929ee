/**
 * `!{refName}` placeholders. A string value that is exactly `!{refName}` is
 * replaced by the value the reference names on the dependency's live object,
 * keeping that value's type (number, boolean, object, array). Strings that
 * merely contain `!{...}` are left alone, as in Smith.
 */
import type { Reference, Resource } from '../../api/resource.js';
import { cloneJson, describeObject, isRecord, type LiveObject } from './objects.js';
import { getPath } from './path.js';

const PLACEHOLDER = /^!\{(.+)\}$/s;

/** The reference name if `value` is a placeholder string, else undefined. */
export function placeholderName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return PLACEHOLDER.exec(value)?.[1];
}

export interface PlaceholderUse {
  name: string;
  /** Where it occurs in the object, e.g. "spec.ports[0].port". */
  at: string;
}

/** Every placeholder in `value`, in document order, with where it is. */
export function findPlaceholders(value: unknown, at = ''): PlaceholderUse[] {
  const name = placeholderName(value);
  if (name !== undefined) return [{ name, at }];
  if (Array.isArray(value)) return value.flatMap((item, i) => findPlaceholders(item, `${at}[${i}]`));
  if (isRecord(value)) return Object.entries(value).flatMap(([key, item]) => findPlaceholders(item, at === '' ? key : `${at}.${key}`));
  return [];
}

/** A copy of `value` with each placeholder whose name is in `values` replaced by (a copy of) its value. */
export function substitutePlaceholders(value: unknown, values: ReadonlyMap<string, unknown>): unknown {
  const name = placeholderName(value);
  if (name !== undefined) return values.has(name) ? cloneJson(values.get(name)) : value;
  if (Array.isArray(value)) return value.map((item) => substitutePlaceholders(item, values));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitutePlaceholders(item, values)]));
  return value;
}

export type ReferenceValues = { ok: true; values: Map<string, unknown> } | { ok: false; errors: string[] };

/**
 * The value of each named reference of `resource`, read from the live objects
 * of its dependencies. Nameless references only order resources and are
 * skipped. A missing dependency or value is an error for this resource only,
 * and a retriable one: the dependency may simply not be populated yet.
 */
export function resolveReferenceValues(resource: Resource, liveOf: (resourceName: string) => LiveObject | undefined): ReferenceValues {
  const values = new Map<string, unknown>();
  const errors: string[] = [];
  for (const ref of resource.references ?? []) {
    if (ref.name === undefined) continue;
    const result = resolveOne(ref, ref.name, liveOf(ref.resource));
    if (result.ok) values.set(ref.name, result.value);
    else errors.push(result.error);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, values };
}

function resolveOne(
  ref: Reference,
  name: string,
  live: LiveObject | undefined,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const prefix = `reference "${name}" to resource "${ref.resource}"`;
  if (live === undefined) return { ok: false, error: `${prefix}: the resource does not exist yet` };
  if (ref.path === undefined) return { ok: false, error: `${prefix}: no path given` };
  const found = getPath(live, ref.path);
  if (found.found) return { ok: true, value: found.value };
  const why = 'message' in found ? found.message : `path "${ref.path}" not found on ${describeObject(live)}`;
  return { ok: false, error: `${prefix}: ${why}` };
}

/**
 * The resource's object with its references substituted.
 * Errors name each reference that could not be resolved.
 */
export function resolveObject<T>(
  object: T,
  resource: Resource,
  liveOf: (resourceName: string) => LiveObject | undefined,
): { ok: true; object: T; substituted: unknown[] } | { ok: false; errors: string[] } {
  const resolved = resolveReferenceValues(resource, liveOf);
  if (!resolved.ok) return resolved;
  const used = new Set(findPlaceholders(object).map((p) => p.name));
  // Substitution only swaps leaf strings, so the shape of T survives.
  return {
    ok: true,
    object: substitutePlaceholders(object, resolved.values) as T,
    substituted: [...resolved.values].filter(([name]) => used.has(name)).map(([, value]) => value),
  };
}
