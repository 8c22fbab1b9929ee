/**
 * A small evaluator for the field paths used by references and CRD readiness
 * annotations. It accepts Smith's dot form (`status.clusterIP`,
 * `spec.ports[0].port`, `metadata.annotations['a.b/c']`) and kubectl's
 * JSONPath form for a single field (`{.status.x}`, `.status.x`, `$.status.x`).
 * Filters, wildcards and recursive descent are deliberately not supported:
 * a reference names exactly one value.
 */
import { isRecord } from './objects.js';

export type PathSegment = string | number;

export type ParsedPath = { ok: true; segments: PathSegment[] } | { ok: false; message: string };

export type PathValue = { found: true; value: unknown } | { found: false };

const IDENTIFIER_END = new Set(['.', '[']);

export function parsePath(input: string): ParsedPath {
  let path = input.trim();
  if (path.startsWith('{') && path.endsWith('}')) path = path.slice(1, -1).trim();
  if (path.startsWith('$')) path = path.slice(1);
  if (path.startsWith('.')) path = path.slice(1);
  if (path === '') return { ok: false, message: `path "${input}" is empty` };

  const segments: PathSegment[] = [];
  let i = 0;
  const fail = (why: string): ParsedPath => ({ ok: false, message: `path "${input}": ${why} at offset ${i}` });
  while (i < path.length) {
    if (path[i] === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) return fail('unclosed "["');
      const inner = path.slice(i + 1, close).trim();
      const quoted = /^'(.*)'$/s.exec(inner) ?? /^"(.*)"$/s.exec(inner);
      if (quoted) {
        // Quoted keys cannot contain "]": no Kubernetes label or annotation key can.
        segments.push(quoted[1] ?? '');
      } else if (/^\d+$/.test(inner)) {
        segments.push(Number(inner));
      } else {
        return fail(`unsupported subscript "[${inner}]" (use an index like [0] or a quoted key like ['a.b'])`);
      }
      i = close + 1;
      if (i < path.length && path[i] === '.') {
        i += 1;
        if (i === path.length) return fail('trailing "."');
      }
      continue;
    }
    let name = '';
    while (i < path.length && !IDENTIFIER_END.has(path[i] ?? '')) {
      const ch = path[i] ?? '';
      if (ch === '\\' && i + 1 < path.length) {
        // kubectl escapes dots inside keys: {.metadata.annotations.a\.b/c}
        name += path[i + 1];
        i += 2;
        continue;
      }
      if (ch === '*' || ch === ']' || ch === '?' || ch === '@') return fail(`unsupported character "${ch}"`);
      name += ch;
      i += 1;
    }
    if (name === '') return fail('empty field name');
    segments.push(name);
    if (i < path.length && path[i] === '.') {
      i += 1;
      if (i === path.length) return fail('trailing "."');
    }
  }
  return { ok: true, segments };
}

/** Walks `segments` from `root`. A null value counts as absent, as in Smith. */
export function evaluatePath(root: unknown, segments: readonly PathSegment[]): PathValue {
  let current: unknown = root;
  for (const segment of segments) {
    if (typeof segment === 'number') {
      if (!Array.isArray(current) || segment >= current.length) return { found: false };
      current = current[segment];
    } else {
      if (!isRecord(current) || !Object.hasOwn(current, segment)) return { found: false };
      current = current[segment];
    }
  }
  return current === undefined || current === null ? { found: false } : { found: true, value: current };
}

/** Parses and evaluates in one step; a path that does not parse is absent, with the parse error. */
export function getPath(root: unknown, path: string): PathValue | { found: false; message: string } {
  const parsed = parsePath(path);
  if (!parsed.ok) return { found: false, message: parsed.message };
  return evaluatePath(root, parsed.segments);
}
