/** The offline read of a Bundle at the API server's door: the CRD's schema, strictly, and its CEL rules. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CRD_PATHS, repoRoot } from '../../../src/api/crd-paths.js';
import { CEL_RULE_READINGS, type CelRule } from '../../../src/cli/crd-rules.js';
import { bundleSchema, checkSchema, closestField } from '../../../src/cli/strict-schema.js';

const bundle = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'smith.atlassian.com/v1',
  kind: 'Bundle',
  metadata: { name: 'b' },
  spec,
  ...extra,
});
const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', annotations: { anything: 'goes' } }, anyField: { kept: true } };
const messages = (value: unknown): string[] => checkSchema(value, bundleSchema()).map((p) => p.message);

describe('the CRD schema, read strictly', () => {
  it.each([
    ['a valid Bundle', bundle({ resources: [{ name: 'a', spec: { object: cm } }] }), []],
    [
      'a misspelt field, with what was meant',
      bundle({ resourses: [] }),
      ['unknown field "spec.resourses" (did you mean "spec.resources"?)'],
    ],
    ['an unknown field nothing is close to', bundle({ resources: [], frobnicate: 1 }), ['unknown field "spec.frobnicate"']],
    [
      'a wrong case',
      bundle({ ServiceAccountName: 'x' }),
      ['unknown field "spec.ServiceAccountName" (did you mean "spec.serviceAccountName"?)'],
    ],
    [
      'an unknown field in a resource',
      bundle({ resources: [{ name: 'a', referencess: [], spec: { object: cm } }] }),
      ['unknown field "spec.resources[0].referencess" (did you mean "spec.resources[0].references"?)'],
    ],
    ['an unknown top-level field', bundle({ resources: [] }, { sepc: {} }), ['unknown field "sepc" (did you mean "spec"?)']],
    [
      'an unknown metadata field',
      bundle({ resources: [] }, { metadata: { name: 'b', lables: {} } }),
      ['unknown field "metadata.lables" (did you mean "metadata.labels"?)'],
    ],
    [
      'a policy that is not one',
      bundle({ resources: [], deletionDefaults: { deletionPolicy: 'Keep' } }),
      ['spec.deletionDefaults.deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Orphan", "Approve"'],
    ],
    [
      'a delay too long',
      bundle({ resources: [], deletionDefaults: { deletionDelay: 'x'.repeat(65) } }),
      ['spec.deletionDefaults.deletionDelay: Too long: may not be more than 64 bytes'],
    ],
    [
      'a wrong type',
      bundle({ resources: [{ name: 7, spec: {} }] }),
      ['spec.resources[0].name: Invalid value: "integer": spec.resources[0].name in body must be of type string: "integer"'],
    ],
    ['a missing spec', { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name: 'b' } }, ['spec: Required value']],
    [
      "a self reference (the CRD's CEL rule)",
      bundle({ resources: [{ name: 'a', references: [{ resource: 'a' }], spec: { object: cm } }] }),
      ['spec.resources[0].references: Invalid value: a resource may not reference itself'],
    ],
  ])('%s', (_title, value, want) => {
    expect(messages(value)).toEqual(want);
  });

  it('keeps what the CRD preserves: any field of a listed object', () => {
    expect(messages(bundle({ resources: [{ name: 'a', spec: { object: { ...cm, spec: { replicas: 1 } } } }] }))).toEqual([]);
  });

  it.each([
    ['resourses', ['resources', 'serviceAccountName', 'deletionDefaults'], 'resources'],
    ['deletionDefault', ['resources', 'deletionDefaults'], 'deletionDefaults'],
    ['x', ['resources'], undefined],
    ['zzzzzzzz', ['resources'], undefined],
  ])('closestField(%s)', (name, known, want) => {
    expect(closestField(name, known)).toBe(want);
  });
});

describe("the CRD's CEL rules", () => {
  function rulesIn(node: unknown): CelRule[] {
    if (Array.isArray(node)) return node.flatMap(rulesIn);
    if (typeof node !== 'object' || node === null) return [];
    const own = (node as { 'x-kubernetes-validations'?: CelRule[] })['x-kubernetes-validations'] ?? [];
    return [...own, ...Object.values(node).flatMap(rulesIn)];
  }

  it('each has an offline reading, so validate never skips a rule the API server enforces', () => {
    for (const path of CRD_PATHS) {
      const rules = rulesIn(parse(readFileSync(join(repoRoot(), path), 'utf8').replace(/^#.*\n/, '')));
      expect(rules.length).toBeGreaterThan(0);
      for (const rule of rules)
        expect({ rule: rule.rule, read: CEL_RULE_READINGS.has(rule.rule) }).toEqual({ rule: rule.rule, read: true });
    }
  });

  it('validate reads the schema the CRD in crds/ declares', () => {
    const crd = parse(readFileSync(join(repoRoot(), CRD_PATHS[0]), 'utf8')) as {
      spec: { versions: { schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[] };
    };
    const onDisk = crd.spec.versions[0]?.schema.openAPIV3Schema.properties;
    expect(bundleSchema().properties?.spec).toEqual(onDisk?.spec);
  });
});
