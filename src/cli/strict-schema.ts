/**
 * The API server's judgement of a Bundle at the door, offline: the CRD's
 * structural schema (generated from the same zod schemas, src/api/crd.ts)
 * read strictly, as the API server's strict field validation reads a
 * request: an unknown field is an error naming it (with a "did you mean"
 * when a known one is close), beside types, required fields, enums, bounds,
 * list keys and the CRD's CEL rules (crd-rules.ts). Messages are the API
 * server's.
 *
 * The strictness belongs to reading a file. The operator's own parse of a
 * stored Bundle stays lenient: the API server has already pruned what the
 * CRD does not declare.
 */
import { buildBundleCrd } from '../api/crd.js';
import { isRecord } from '../core/bundle/objects.js';
import { checkCelRules, type CelRule } from './crd-rules.js';
import { formatFieldPath, type FieldPath } from './field-path.js';

export interface OpenApiSchema {
  type?: string;
  properties?: Record<string, OpenApiSchema>;
  items?: OpenApiSchema;
  additionalProperties?: OpenApiSchema;
  required?: string[];
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  maxItems?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: CelRule[];
}

export interface SchemaProblem {
  path: FieldPath;
  message: string;
  /** A field the schema does not declare: reported at its key, not its value. */
  unknownField?: boolean;
}

/** ObjectMeta's fields: the API server knows metadata without the CRD declaring it. */
const OBJECT_META_FIELDS = [
  'name',
  'generateName',
  'namespace',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
];

/** The Bundle's schema as the CRD in crds/ declares it, with ObjectMeta's fields. */
export function bundleSchema(): OpenApiSchema {
  const crd = buildBundleCrd() as { spec: { versions: { schema: { openAPIV3Schema: OpenApiSchema } }[] } };
  const root = crd.spec.versions[0]?.schema.openAPIV3Schema ?? {};
  const metadata: OpenApiSchema = {
    type: 'object',
    properties: Object.fromEntries(OBJECT_META_FIELDS.map((f) => [f, { 'x-kubernetes-preserve-unknown-fields': true }])),
  };
  return { ...root, properties: { ...root.properties, metadata } };
}

/** Edits from `a` to `b`, a swap of two neighbours counting as one ("sepc" is one edit from "spec"). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The known field closest to a misspelt one, when close enough to be what was meant. */
export function closestField(name: string, known: readonly string[]): string | undefined {
  let best: { field: string; distance: number } | undefined;
  for (const field of known) {
    const distance = field.toLowerCase() === name.toLowerCase() ? 0.5 : editDistance(name, field);
    if (best === undefined || distance < best.distance) best = { field, distance };
  }
  return best !== undefined && best.distance <= Math.max(1, Math.floor(name.length / 3)) ? best.field : undefined;
}

const typeName = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'number'
        ? Number.isInteger(value)
          ? 'integer'
          : 'number'
        : typeof value;

function hasType(value: unknown, type: string): boolean {
  const actual = typeName(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

/** Every problem the API server would find in `value` against `schema`, at `path`. */
export function checkSchema(value: unknown, schema: OpenApiSchema, path: FieldPath = []): SchemaProblem[] {
  const at = formatFieldPath(path);
  if (value === null || value === undefined) return [];
  if (schema.type !== undefined && !hasType(value, schema.type)) {
    return [
      { path, message: `${at}: Invalid value: "${typeName(value)}": ${at} in body must be of type ${schema.type}: "${typeName(value)}"` },
    ];
  }
  const problems: SchemaProblem[] = [];
  if (typeof value === 'string') {
    if (schema.enum !== undefined && !schema.enum.includes(value))
      problems.push({
        path,
        message: `${at}: Unsupported value: ${JSON.stringify(value)}: supported values: ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      });
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      problems.push({ path, message: `${at}: Too long: may not be more than ${schema.maxLength} bytes` });
    if (schema.minLength !== undefined && value.length < schema.minLength)
      problems.push({
        path,
        message: `${at}: Invalid value: ${JSON.stringify(value)}: ${at} in body should be at least ${schema.minLength} chars long`,
      });
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
      problems.push({ path, message: `${at}: Invalid value: ${JSON.stringify(value)}: ${at} in body should match '${schema.pattern}'` });
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      // The API server stops at the bound: it judges no item of a list that is too long.
      return [{ path, message: `${at}: Too many: ${value.length}: must have at most ${schema.maxItems} items` }];
    }
    if (schema.items !== undefined) value.forEach((item, i) => problems.push(...checkSchema(item, schema.items ?? {}, [...path, i])));
    problems.push(...duplicateKeys(value, schema, path));
  }
  if (isRecord(value)) problems.push(...checkObject(value, schema, path));
  if (problems.length === 0) problems.push(...checkCelRules(value, schema['x-kubernetes-validations'] ?? [], path));
  return problems;
}

function checkObject(value: Record<string, unknown>, schema: OpenApiSchema, path: FieldPath): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const properties = schema.properties ?? {};
  for (const field of schema.required ?? []) {
    if (value[field] === undefined || value[field] === null)
      problems.push({ path: [...path, field], message: `${formatFieldPath([...path, field])}: Required value` });
  }
  for (const [key, child] of Object.entries(value)) {
    const childSchema = properties[key] ?? schema.additionalProperties;
    if (childSchema !== undefined) {
      problems.push(...checkSchema(child, childSchema, [...path, key]));
    } else if (schema['x-kubernetes-preserve-unknown-fields'] !== true) {
      const suggestion = closestField(key, Object.keys(properties));
      problems.push({
        path: [...path, key],
        unknownField: true,
        message: `unknown field "${formatFieldPath([...path, key])}"${suggestion !== undefined ? ` (did you mean "${formatFieldPath([...path, suggestion])}"?)` : ''}`,
      });
    }
  }
  return problems;
}

/** A list keyed by fields (x-kubernetes-list-type: map): two items with the same key, as server-side apply says it. */
function duplicateKeys(items: readonly unknown[], schema: OpenApiSchema, path: FieldPath): SchemaProblem[] {
  const keys = schema['x-kubernetes-list-map-keys'];
  if (schema['x-kubernetes-list-type'] !== 'map' || keys === undefined) return [];
  const seen = new Set<string>();
  const problems: SchemaProblem[] = [];
  for (const item of items) {
    if (!isRecord(item)) continue;
    const key = keys.map((k) => `${k}=${JSON.stringify(item[k])}`).join(',');
    if (seen.has(key)) problems.push({ path, message: `${formatFieldPath(path)}: duplicate entries for key [${key}]` });
    seen.add(key);
  }
  return problems;
}
