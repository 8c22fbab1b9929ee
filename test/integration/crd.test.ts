/** The generated CRD on the real apiserver: accepted, examples valid, malformed Bundles rejected readably. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { MAX_REFERENCES, MAX_RESOURCES } from '../../src/api/resource.js';
import { repoRoot } from '../../src/api/crd-paths.js';
import { connect, createNamespace, resourceType, run, type TestEnv } from './harness.js';

let env: TestEnv;
let ns: string;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'crd');
});
afterAll(() => env.close());

function exampleFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? exampleFiles(path) : entry.endsWith('.yaml') ? [path] : [];
  });
}

describe('Bundle CRD', () => {
  it('is established with status subresource, short name and printer columns', async () => {
    const crd = await env.client.get(
      await resourceType(env, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
      undefined,
      'bundles.smith.atlassian.com',
    );
    const spec = crd.spec as {
      names: { shortNames: string[]; categories: string[] };
      versions: { subresources: unknown; additionalPrinterColumns: { name: string; priority?: number }[] }[];
    };
    expect(spec.names.shortNames).toContain('bdl');
    expect(spec.versions[0]?.subresources).toEqual({ status: {} });
    const columns = spec.versions[0]?.additionalPrinterColumns ?? [];
    // What a person reads first by default; the rest with -o wide.
    expect(columns.filter((c) => (c.priority ?? 0) === 0).map((c) => c.name)).toEqual([
      'Ready',
      'Status',
      'Resources',
      'Pending-Deletions',
      'Age',
    ]);
    expect(columns.filter((c) => c.priority === 1).map((c) => c.name)).toEqual(['Reason', 'Reconciling', 'Stalled', 'Awaiting-Approval']);
    const conditions = (crd.status as { conditions: { type: string; status: string }[] }).conditions;
    expect(conditions.find((c) => c.type === 'Established')?.status).toBe('True');
    expect(conditions.find((c) => c.type === 'NonStructuralSchema')).toBeUndefined();
  });

  it('accepts every example manifest (server-side dry run)', async () => {
    const files = exampleFiles(join(repoRoot(), 'examples'));
    expect(files.length).toBeGreaterThanOrEqual(4);
    // CRDs first, so that example custom resources have their kind.
    const crds = files.filter((f) => f.endsWith('crd.yaml'));
    for (const file of crds) {
      const result = await run('kubectl', ['apply', '-f', file]);
      expect(result).toMatchObject({ code: 0 });
    }
    for (const file of files) {
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) expect(doc.errors).toEqual([]);
      const result = await run('kubectl', ['apply', '--dry-run=server', '-n', ns, '-f', file]);
      expect({ file, code: result.code, stderr: result.stderr }).toEqual({ file, code: 0, stderr: '' });
    }
  });

  it('stores the deletion-policy examples as written: annotations and spec.deletionDefaults (server-side dry run)', async () => {
    const files = exampleFiles(join(repoRoot(), 'examples', 'deletion-policies'));
    expect(files.map((f) => basename(f)).sort()).toEqual(['approve.yaml', 'bundle-ready.yaml', 'defaults.yaml', 'keep.yaml']);
    for (const file of files) {
      const result = await run('kubectl', ['apply', '--dry-run=server', '-n', ns, '-o', 'json', '-f', file]);
      expect({ file, code: result.code, stderr: result.stderr }).toEqual({ file, code: 0, stderr: '' });
      const written = parse(readFileSync(file, 'utf8')) as { spec: unknown };
      expect({ file, spec: (JSON.parse(result.stdout) as { spec: unknown }).spec }).toEqual({ file, spec: written.spec });
    }
  });

  it.each([
    'bundle',
    'bundle.spec',
    'bundle.spec.resources',
    'bundle.spec.resources.references',
    'bundle.spec.resources.spec.object',
    'bundle.status',
    'bundle.status.pendingDeletions',
  ])('kubectl explain %s describes every field', async (path) => {
    const result = await run('kubectl', ['explain', path]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('DESCRIPTION:');
    expect(result.stdout).toContain('FIELDS:');
    expect(result.stdout).not.toContain('<no description>');
  });

  it.each([
    [
      'a resource without name',
      { resources: [{ spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } } }] },
      /spec.resources\[0\].name: Required value/,
    ],
    [
      'a resource name that is not DNS-1123',
      { resources: [{ name: 'Bad_Name', spec: {} }] },
      /spec.resources\[0\].name: Invalid value: "Bad_Name"/,
    ],
    [
      'resources that is not a list',
      { resources: 'configmap' },
      /spec.resources: Invalid value: "string": spec.resources in body must be of type array/,
    ],
    [
      'a reference without resource',
      { resources: [{ name: 'a', references: [{ name: 'r' }], spec: {} }] },
      /spec.resources\[0\].references\[0\].resource: Required value/,
    ],
    [
      'an object without kind',
      { resources: [{ name: 'a', spec: { object: { apiVersion: 'v1', metadata: { name: 'x' } } } }] },
      /spec.resources\[0\].spec.object.kind: Required value/,
    ],
    [
      'duplicate resource names',
      {
        resources: [
          { name: 'a', spec: {} },
          { name: 'a', spec: {} },
        ],
      },
      /spec.resources\[1\]: Duplicate value: .*"name":"a"/,
    ],
    [
      'a resource that references itself',
      { resources: [{ name: 'a', references: [{ resource: 'a' }], spec: {} }] },
      /spec.resources\[0\].references: Invalid value: .*a resource may not reference itself/,
    ],
    [
      'more resources than the bound',
      { resources: Array.from({ length: MAX_RESOURCES + 1 }, (_, i) => ({ name: `r${i}`, spec: {} })) },
      new RegExp(`spec.resources: Too many: ${MAX_RESOURCES + 1}: must have at most ${MAX_RESOURCES} items`),
    ],
    [
      'more references than the bound',
      {
        resources: [
          { name: 'b', spec: {} },
          { name: 'a', references: Array.from({ length: MAX_REFERENCES + 1 }, () => ({ resource: 'b' })), spec: {} },
        ],
      },
      new RegExp(`spec.resources\\[1\\].references: Too many: ${MAX_REFERENCES + 1}: must have at most ${MAX_REFERENCES} items`),
    ],
  ])('rejects %s with a readable message', async (_case, spec, message) => {
    const manifest = JSON.stringify({
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      metadata: { name: 'bad', namespace: ns },
      spec,
    });
    const result = await run('kubectl', ['create', '-f', '-'], { input: manifest });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });
});
