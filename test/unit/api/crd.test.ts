import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBundleCrd, renderBundleCrdYaml } from '../../../src/api/crd.js';
import { CRD_PATHS, repoRoot } from '../../../src/api/crd-paths.js';
import { BundleSchema, formatIssues } from '../../../src/api/bundle.js';
import { MAX_REFERENCES, MAX_RESOURCES } from '../../../src/api/resource.js';

describe('generated CRD', () => {
  it.each(CRD_PATHS)('%s is up to date with src/api (run npm run crd:generate)', (rel) => {
    expect(readFileSync(join(repoRoot(), rel), 'utf8')).toBe(renderBundleCrdYaml());
  });
});

describe('Bundle schema', () => {
  const base = { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name: 'b', namespace: 'ns', uid: 'u' } };
  it.each([
    ['missing resource name', { resources: [{ spec: {} }] }, 'spec.resources[0].name'],
    ['bad resource name', { resources: [{ name: 'Not_Valid', spec: {} }] }, 'DNS-1123'],
    ['resources not a list', { resources: 'x' }, 'spec.resources'],
    [
      'reference without resource',
      { resources: [{ name: 'a', references: [{ name: 'r' }], spec: {} }] },
      'spec.resources[0].references[0].resource',
    ],
    [
      'more resources than the bound',
      { resources: Array.from({ length: MAX_RESOURCES + 1 }, (_, i) => ({ name: `r${i}`, spec: {} })) },
      `spec.resources: Too big: expected array to have <=${MAX_RESOURCES} items`,
    ],
    [
      'more references than the bound',
      { resources: [{ name: 'a', references: Array.from({ length: MAX_REFERENCES + 1 }, () => ({ resource: 'b' })), spec: {} }] },
      `spec.resources[0].references: Too big: expected array to have <=${MAX_REFERENCES} items`,
    ],
  ])('rejects %s with a message naming the field', (_case, spec, fragment) => {
    const result = BundleSchema.safeParse({ ...base, spec });
    expect(result.success).toBe(false);
    if (!result.success) expect(formatIssues(result.error).join('\n')).toContain(fragment);
  });

  it('accepts a Smith manifest and keeps unknown object fields', () => {
    const result = BundleSchema.parse({
      ...base,
      spec: {
        resources: [{ name: 'cm', spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { k: 'v' } } } }],
      },
    });
    expect(result.spec.resources[0]?.spec.object).toMatchObject({ data: { k: 'v' } });
  });
});

describe('CRD documentation', () => {
  /** Paths of schema nodes under properties/items that carry no description (what `kubectl explain` would print as <no description>). */
  function undocumented(node: Record<string, unknown>, path: string, out: string[]): string[] {
    const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
    for (const [name, child] of Object.entries(properties ?? {})) {
      // The root's metadata may carry nothing but its type (the apiserver documents ObjectMeta itself).
      if (path === 'bundle' && name === 'metadata') continue;
      if (typeof child.description !== 'string' || child.description.length === 0) out.push(`${path}.${name}`);
      undocumented(child, `${path}.${name}`, out);
    }
    const items = node.items as Record<string, unknown> | undefined;
    if (items) undocumented(items, `${path}[]`, out);
    const values = node.additionalProperties as Record<string, unknown> | undefined;
    if (values && typeof values === 'object') undocumented(values, `${path}{}`, out);
    return out;
  }

  it('describes every field of the Bundle (kubectl explain shows no <no description>)', () => {
    const crd = buildBundleCrd() as { spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] } };
    const root = crd.spec.versions[0]!.schema.openAPIV3Schema;
    expect(undocumented(root, 'bundle', [])).toEqual([]);
  });
});
