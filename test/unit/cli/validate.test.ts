import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_PROBLEMS } from '../../../src/cli/args.js';
import type { CliIo } from '../../../src/cli/io.js';
import { parseManifests } from '../../../src/cli/manifests.js';
import { runCli } from '../../../src/cli/program.js';
import { formatProblem, validateFile } from '../../../src/cli/validate.js';

function problems(text: string, namespace = 'default'): string[] {
  return validateFile(parseManifests('f.yaml', text), namespace).problems.map(formatProblem);
}

const header = 'apiVersion: smith.atlassian.com/v1\nkind: Bundle\nmetadata:\n  name: b\n';

describe('validate (offline)', () => {
  it('accepts a valid Bundle and skips other documents', () => {
    const result = validateFile(
      parseManifests(
        'f.yaml',
        `${header}spec:\n  resources:\n    - name: c\n      spec:\n        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n`,
      ),
      'team',
    );
    expect(result.problems).toEqual([]);
    expect(result.bundles.map((b) => `${b.namespace}/${b.name}`)).toEqual(['team/b']);
    expect(result.skipped).toEqual(['ConfigMap other']);
  });

  it.each([
    [
      'a schema error at its line',
      `${header}spec:\n  resources:\n    - name: Bad_Name\n      spec: {}\n`,
      `f.yaml:7:13: Bundle default/b: spec.resources[0].name: Invalid value: "Bad_Name": spec.resources[0].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'`,
    ],
    [
      'a missing field at its parent',
      `${header}spec:\n  resources:\n    - spec: {}\n`,
      'f.yaml:7:7: Bundle default/b: spec.resources[0].name: Required value',
    ],
    [
      'a wrong apiVersion',
      'apiVersion: smith.atlassian.com/v2\nkind: Bundle\nmetadata: {name: b}\n',
      'f.yaml:1:13: Bundle default/b: no matches for kind "Bundle" in version "smith.atlassian.com/v2": the CRD serves smith.atlassian.com/v1',
    ],
    [
      'a semantic error at its resource',
      `${header}spec:\n  resources:\n    - name: a\n      references: [{resource: ghost}]\n      spec:\n        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n`,
      'f.yaml:7:7: Bundle default/b: resource "a": references[0] refers to resource "ghost", which is not in the Bundle',
    ],
    [
      'a built-in cluster-scoped kind',
      `${header}spec:\n  resources:\n    - name: r\n      spec:\n        object: {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: r}}\n`,
      'f.yaml:7:7: Bundle default/b: resource "r": ClusterRole is cluster-scoped: a namespaced Bundle cannot own it',
    ],
    ['a YAML syntax error', 'apiVersion: [\n', 'f.yaml:2:1: YAML: '],
    [
      'a CEL readiness rule that does not compile',
      `${header}spec:\n  healthChecks:\n    - {apiVersion: example.com/v1, kind: Widget, current: 'status.phase ==', failed: 'status.reason'}\n  resources: []\n`,
      'Bundle default/b: spec.healthChecks[0].current: does not compile: at 1:14: found = but expecting end of input',
    ],
    [
      'a CEL readiness rule that returns a non-bool',
      `${header}spec:\n  healthChecks:\n    - {apiVersion: example.com/v1, kind: Widget, current: 'size(status.items)'}\n  resources: []\n`,
      'Bundle default/b: spec.healthChecks[0].current: returns the result of size, not a bool',
    ],
    [
      'a CEL readiness rule without current',
      `${header}spec:\n  healthChecks:\n    - {apiVersion: example.com/v1, kind: Widget, failed: 'true'}\n  resources: []\n`,
      'Bundle default/b: spec.healthChecks[0].current: Required value',
    ],
  ])('reports %s', (_case, text, want) => {
    expect(problems(text).join('\n')).toContain(want);
  });

  it('takes unknown kinds as namespaced: custom resources need no cluster', () => {
    expect(
      problems(
        `${header}spec:\n  resources:\n    - name: w\n      spec:\n        object: {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}\n`,
      ),
    ).toEqual([]);
  });
});

describe('a document nested deeper than the YAML parser can recurse', () => {
  function nestedJson(depth: number): string {
    return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  }
  const deepBundle = (name: string): string =>
    JSON.stringify({
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      metadata: { name },
      spec: { resources: [{ name: 'a', spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: {} } } }] },
    }).replace('"data":{}', `"data":${nestedJson(20_000)}`);

  it("written as JSON, is read and refused in the operator's words, its neighbours judged as usual", () => {
    const found = problems(`${deepBundle('deep')}\n---\n${header}spec:\n  resources: []\n`);
    expect(found.some((p) => p.includes('Bundle default/deep: resource "a": object nests deeper than 100 levels'))).toBe(true);
    expect(found.some((p) => p.includes('Bundle default/b'))).toBe(false);
  });

  it('written as YAML, is a clear problem at the document, not a stack trace', () => {
    const flow = `${'{a: '.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const found = problems(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: ${flow}\n`);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((p) => p.includes('document nests too deeply to read as YAML'))).toBe(true);
  });
});

describe('validate --health-checks-file', () => {
  const capture = (): { io: CliIo; out: string[]; err: string[] } => {
    const out: string[] = [];
    const err: string[] = [];
    return { io: { out: (l) => void out.push(l), err: (l) => void err.push(l) }, out, err };
  };
  const dir = mkdtempSync(join(tmpdir(), 'bundlesmith-validate-'));
  const bundle = join(dir, 'bundle.yaml');
  writeFileSync(bundle, `${header}spec:\n  resources: []\n`);

  it("judges the operator's rules as the operator does at start", async () => {
    const rules = join(dir, 'bad-rules.yaml');
    writeFileSync(rules, 'healthCheckExprs:\n  - {apiVersion: example.com/v1, kind: Widget, current: "status.phase =="}\n');
    const c = capture();
    expect(await runCli(['validate', bundle, '--health-checks-file', rules], c.io)).toBe(EXIT_PROBLEMS);
    expect(c.out).toEqual([`${rules}: --health-checks-file[0].current: does not compile: at 1:14: found = but expecting end of input`]);
  });

  it('accepts a good file', async () => {
    const rules = join(dir, 'rules.json');
    writeFileSync(rules, JSON.stringify([{ apiVersion: 'example.com/v1', kind: 'Widget', current: "status.phase == 'Ready'" }]));
    const c = capture();
    expect(await runCli(['validate', bundle, '--health-checks-file', rules], c.io)).toBe(0);
  });
});
