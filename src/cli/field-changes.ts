/**
 * The fields one apply changes, each as old → new, for `diff`. Secret values
 * are never shown: as kubectl diff does, a changed one is "*** (before)" →
 * "*** (after)", so a diff in a CI log leaks nothing.
 */
import { isRecord } from '../core/bundle/objects.js';
import { REDACTED, redact } from '../core/bundle/redact.js';

export interface FieldChange {
  /** Dotted path, e.g. data.v or spec.template.spec (deeper changes are reported at the depth limit). */
  path: string;
  /** Absent: the field is added. */
  old?: unknown;
  /** Absent: the field is removed. */
  new?: unknown;
}

/** Server-owned fields that say nothing about what an apply changes. */
const IGNORED_METADATA = new Set(['managedFields', 'resourceVersion', 'generation', 'creationTimestamp', 'uid', 'selfLink']);

/** How deep changes are reported: deeper differences are shown whole at this level. */
export const CHANGE_DEPTH = 4;

function walk(before: unknown, after: unknown, depth: number, prefix: string, out: FieldChange[]): void {
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  if (!isRecord(before) || !isRecord(after) || depth === 0) {
    out.push({
      path: prefix || '(root)',
      ...(before !== undefined ? { old: before } : {}),
      ...(after !== undefined ? { new: after } : {}),
    });
    return;
  }
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const key of keys) {
    if (prefix === '' && key === 'status') continue;
    if (prefix === 'metadata' && IGNORED_METADATA.has(key)) continue;
    walk(before[key], after[key], depth - 1, prefix === '' ? key : `${prefix}.${key}`, out);
  }
}

/** Where `after` differs from `before`, with both values; status and server-owned metadata are ignored. */
export function fieldChanges(before: unknown, after: unknown, depth = CHANGE_DEPTH): FieldChange[] {
  const out: FieldChange[] = [];
  walk(before, after, depth, '', out);
  return out;
}

const SECRET_VALUE_FIELDS = new Set(['data', 'stringData']);

/** The changes with a Secret's values masked (kubectl diff's "***"). */
export function maskSecretValues(object: { apiVersion?: unknown; kind?: unknown }, changes: readonly FieldChange[]): FieldChange[] {
  if (object.apiVersion !== 'v1' || object.kind !== 'Secret') return [...changes];
  return changes.map((c) => {
    if (!SECRET_VALUE_FIELDS.has(c.path.split('.')[0] ?? '')) return c;
    return {
      path: c.path,
      ...(c.old !== undefined ? { old: maskAll(c.old, '*** (before)') } : {}),
      ...(c.new !== undefined ? { new: maskAll(c.new, '*** (after)') } : {}),
    };
  });
}

/** A value with every leaf masked: a whole map keeps its keys, never its values. */
function maskAll(value: unknown, mask: string): unknown {
  if (isRecord(value)) return Object.fromEntries(Object.keys(value).map((k) => [k, maskAll(value[k], mask)]));
  return mask;
}

function redactValue(value: unknown, redactions: readonly string[]): unknown {
  if (typeof value === 'string') return redact(value, redactions);
  if (typeof value === 'number' || typeof value === 'boolean') return redactions.includes(String(value)) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redactions));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, redactions)]));
  return value;
}

/**
 * The changes with every value a reference substituted (a password read from
 * a Secret into a ConfigMap, say) blanked out, as the operator blanks them
 * from what it writes (core/bundle/redact.ts).
 */
export function redactChanges(changes: readonly FieldChange[], redactions: readonly string[]): FieldChange[] {
  if (redactions.length === 0) return [...changes];
  return changes.map((c) => ({
    path: c.path,
    ...(c.old !== undefined ? { old: redactValue(c.old, redactions) } : {}),
    ...(c.new !== undefined ? { new: redactValue(c.new, redactions) } : {}),
  }));
}

function show(value: unknown): string {
  if (value === undefined) return '(none)';
  const text = typeof value === 'string' && value.startsWith('***') ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** "data.v: \"1\" → \"2\"". */
export function formatFieldChange(c: FieldChange): string {
  return `${c.path}: ${show(c.old)} → ${show(c.new)}`;
}
