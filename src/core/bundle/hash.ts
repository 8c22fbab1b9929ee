/**
 * A stable content hash: sha256 over canonical JSON (object keys sorted at
 * every level, arrays in order, undefined members dropped as JSON does).
 */
import { createHash } from 'node:crypto';
import { isRecord } from './objects.js';

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((key) => value[key] !== undefined)
        .map((key) => [key, sortKeys(value[key])]),
    );
  }
  return value;
}

/** "sha256:<hex>" of the canonical JSON of `value`. */
export function contentHash(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}
