/**
 * Issue 12, the bad-input suite: hostile and mistaken Bundles on the real
 * apiserver. Every case is answered by a clear condition (or, where the CRD
 * can refuse it, by `kubectl apply`'s error) naming the field; nothing is
 * deleted: each case Bundle first holds an object, then is changed to the bad
 * spec without it, and the object must stay (same UID, no deletionTimestamp);
 * a neighbour Bundle keeps reconciling; the operator's heap stays bounded;
 * and nothing the operator wrote (its log at trace, events, status) holds a
 * Secret value a reference read.
 *
 * The operator runs as a real process, so its whole log can be searched.
 */
import { readFile } from 'node:fs/promises';
import { freePort } from '../../hack/ports.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/api/bundle-resource.js';
import { Annotations } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { conditionOf, connect, createNamespace, resourceType, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, types, waitForReady, type KnownTypes } from './bundles.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

// 29 bytes: its base64 ends in '=', which no label value may hold, so the apiserver refuses (and echoes) it.
const PASSWORD = 'correct-horse-battery-staple!';
const PASSWORD_B64 = Buffer.from(PASSWORD).toString('base64');

type RawResource = Record<string, unknown>;
const cm = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' }, ...extra });
const res = (name: string, object: Record<string, unknown>, references?: unknown[]): RawResource => ({ name, ...(references ? { references } : {}), spec: { object } });
const withMeta = (name: string, meta: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta }, data: { a: 'b' }, ...extra });
const delayed = (name: string, delay: string): Record<string, unknown> => withMeta(name, { annotations: { [Annotations.deletionDelay]: delay } });
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 'x' };
  for (let i = 1; i < depth; i++) v = { n: v };
  return v;
}

/** Answered by the operator: the Bundle's Error condition (True) says `says`. */
interface OperatorCase {
  title: string;
  /** The bad spec's resources, given the case's index (names must be unique in the namespace). */
  resources: (i: number) => RawResource[];
  says: RegExp;
  /** Extra spec fields (serviceAccountName). */
  spec?: Record<string, unknown>;
  /**
   * Resources listed, and Ready, before the bad spec comes (beside the object
   * that must stay). A valid spec prunes what it dropped while its other
   * resources merely wait for their dependencies; a reference that finds no
   * value shows only once its dependency is there, so that dependency is
   * there first, as when a user adds a reference to an existing resource.
   */
  before?: (i: number) => RawResource[];
}

const operatorCases: OperatorCase[] = [
  { title: 'two resources defining one object', resources: (i) => [res('a', cm(`same-${i}`)), res('b', cm(`same-${i}`))], says: /resource "b": defines ConfigMap same-\d+, already defined by resource "a"/ },
  { title: 'a reference to a resource not in the Bundle', resources: (i) => [res('a', cm(`ref-${i}`), [{ resource: 'ghost' }])], says: /refers to resource "ghost", which is not in the Bundle/ },
  { title: 'a mutual reference', resources: (i) => [res('a', cm(`mut-a-${i}`), [{ resource: 'b' }]), res('b', cm(`mut-b-${i}`), [{ resource: 'a' }])], says: /^resource "a": reference cycle: a -> b -> a$/ },
  { title: 'a three-cycle', resources: (i) => [res('a', cm(`c3a-${i}`), [{ resource: 'b' }]), res('b', cm(`c3b-${i}`), [{ resource: 'c' }]), res('c', cm(`c3c-${i}`), [{ resource: 'a' }])], says: /reference cycle: a -> b -> c -> a/ },
  { title: 'a reference name used twice', resources: (i) => [res('a', cm(`rn-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b', path: 'data.a' }, { name: 'x', resource: 'b', path: 'data.a' }]), res('b', cm(`rnb-${i}`))], says: /reference name "x" is used 2 times/ },
  { title: 'a named reference without a path', resources: (i) => [res('a', cm(`np-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b' }]), res('b', cm(`npb-${i}`))], says: /reference "x" has a name but no path/ },
  { title: 'a path that does not parse', resources: (i) => [res('a', cm(`pp-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b', path: 'data[*]' }]), res('b', cm(`ppb-${i}`))], says: /reference "x": path "data\[\*\]": unsupported subscript/ },
  { title: 'an unterminated quoted path', resources: (i) => [res('a', cm(`pq-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b', path: "data['a" }]), res('b', cm(`pqb-${i}`))], says: /reference "x": path "data\['a"/ },
  { title: 'a modifier', resources: (i) => [res('a', cm(`mod-${i}`), [{ resource: 'b', modifier: 'bindsecret' }]), res('b', cm(`modb-${i}`))], says: /has modifier "bindsecret": modifiers are not supported/ },
  { title: 'a placeholder naming no reference', resources: (i) => [res('a', cm(`ph-${i}`, { data: { x: '!{nothing}' } }))], says: /placeholder "!\{nothing\}" at data\.x names no reference of this resource/ },
  { title: 'a placeholder as apiVersion', resources: (i) => [res('a', { apiVersion: '!{v}', kind: 'ConfigMap', metadata: { name: `pv-${i}` } }, [{ name: 'v', resource: 'b', path: 'data.a' }]), res('b', cm(`pvb-${i}`))], says: /object apiVersion cannot be a reference placeholder/ },
  { title: 'a placeholder as kind', resources: (i) => [res('a', { apiVersion: 'v1', kind: '!{k}', metadata: { name: `pk-${i}` } }, [{ name: 'k', resource: 'b', path: 'data.a' }]), res('b', cm(`pkb-${i}`))], says: /object kind cannot be a reference placeholder/ },
  { title: 'a placeholder as name', resources: () => [res('a', withMeta('!{n}', {}), [{ name: 'n', resource: 'b', path: 'data.a' }]), res('b', cm('pn-b'))], says: /object metadata\.name cannot be a reference placeholder/ },
  { title: 'a placeholder as a key', resources: (i) => [res('a', cm(`pkey-${i}`, { data: { '!{x}': 'v' } }), [{ name: 'x', resource: 'b', path: 'data.a' }]), res('b', cm(`pkeyb-${i}`))], says: /placeholder used as a key at data\.!\{x\}/ },
  { title: 'another namespace', resources: (i) => [res('a', withMeta(`ons-${i}`, { namespace: 'kube-system' }))], says: /object namespace "kube-system" differs from the Bundle's namespace/ },
  { title: 'a cluster-scoped kind', resources: (i) => [res('a', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bad-input-ns-${i}` } })], says: /Namespace is cluster-scoped: a namespaced Bundle cannot own it/ },
  { title: 'an unknown kind', resources: (i) => [res('a', { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: `g-${i}` } })], says: /kind Gadget of example\.com\/v1 is not known to the API server/ },
  { title: 'a controller ownerReference of the user', resources: (i) => [res('a', withMeta(`ctl-${i}`, { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: '00000000-0000-0000-0000-000000000001', controller: true }] }))], says: /ownerReference with controller: true \(ReplicaSet rs\)/ },
  { title: 'the deletionTimestamp annotation', resources: (i) => [res('a', withMeta(`dts-${i}`, { annotations: { [Annotations.deletionTimestamp]: '2020-01-01T00:00:00Z' } }))], says: /carries the smith\.atlassian\.com\/deletionTimestamp annotation, which only the operator may set/ },
  { title: 'an approval in the spec', resources: (i) => [res('a', withMeta(`dap-${i}`, { annotations: { [Annotations.deletionApproved]: '2999-01-01T00:00:00Z' } }))], says: /carries the smith\.atlassian\.com\/deletionApproved annotation, which approves one countdown on the live object/ },
  { title: 'a plugin', resources: () => [{ name: 'a', spec: { plugin: { name: 'catalog', objectName: 'x', spec: {} } } }], says: /spec\.plugin \("catalog"\) is not supported/ },
  { title: 'neither object nor plugin', resources: () => [{ name: 'a', spec: {} }], says: /resource "a": spec has neither object nor plugin/ },
  { title: 'the object name "."', resources: () => [res('a', withMeta('.', {}))], says: /object metadata\.name "\." cannot be a Kubernetes object name/ },
  { title: 'the object name ".."', resources: () => [res('a', withMeta('..', {}))], says: /object metadata\.name "\.\." cannot be a Kubernetes object name/ },
  { title: 'an object name with "/"', resources: () => [res('a', withMeta('a/b', {}))], says: /object metadata\.name "a\/b" cannot be a Kubernetes object name/ },
  { title: 'an object name with "%"', resources: () => [res('a', withMeta('a%2fb', {}))], says: /object metadata\.name "a%2fb" cannot be a Kubernetes object name/ },
  { title: 'a Bundle listing a Bundle', resources: (i) => [res('a', { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name: `inner-${i}` }, spec: { resources: [] } })], says: /a Bundle cannot list a Bundle/ },
  { title: 'an object nested 1,000 levels', resources: (i) => [res('a', cm(`deep-${i}`, { spec: nested(1_000) }))], says: /resource "a": object nests deeper than 100 levels/ },
  { title: 'an object nested 101 levels', resources: (i) => [res('a', cm(`deep101-${i}`, { spec: nested(101) }))], says: /object nests deeper than 100 levels/ },
  { title: 'a number in a Secret\'s stringData', resources: (i) => [res('a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `sd-${i}` }, stringData: { port: 5432 } })], says: /stringData\.port is number: Secret stringData values must be strings/ },
  { title: 'a number in ConfigMap data', resources: (i) => [res('a', cm(`num-${i}`, { data: { n: 5 } }))], says: /data\.n is number: ConfigMap data values must be strings/ },
  { title: 'a boolean in ConfigMap data', resources: (i) => [res('a', cm(`bool-${i}`, { data: { on: true } }))], says: /data\.on is boolean/ },
  { title: 'a list as Secret data', resources: (i) => [res('a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `sl-${i}` }, data: ['x'] })], says: /resource "a": data must be a map of strings/ },
  ...['banana', '-1s', '1e9h', '9999999h', '1h-30m', ''].map(
    (delay): OperatorCase => ({ title: `deletionDelay ${JSON.stringify(delay)}`, resources: (i) => [res('a', delayed(`dd-${i}`, delay))], says: /resource "a": annotation smith\.atlassian\.com\/deletionDelay .*(is not a Go duration|is negative|is empty).*nothing of this Bundle is pruned/ }),
  ),
  { title: 'a reference to a path that does not exist', before: (i) => [res('b', cm(`missb-${i}`))], resources: (i) => [res('a', cm(`miss-${i}`, { data: { x: '!{x}' } }), [{ name: 'x', resource: 'b', path: 'data.nothing' }]), res('b', cm(`missb-${i}`))], says: /reference "x" to resource "b": path "data\.nothing" not found/ },
  { title: 'a 1 MiB string', resources: (i) => [res('a', cm(`big-${i}`, { data: { big: 'x'.repeat(1_048_577) } }))], says: /resource "a": .*(must have at most 1048576 bytes|Too long)/ },
  { title: 'a label value with spaces', resources: (i) => [res('a', withMeta(`lbl-${i}`, { labels: { k: 'has spaces' } }))], says: /resource "a": .*metadata\.labels: Invalid value: "has spaces"/ },
  { title: 'a field the type does not declare', resources: (i) => [res('a', cm(`undeclared-${i}`, { spec: { replicas: 1 } }))], says: /resource "a": .*field not declared in schema/ },
  { title: 'an object name with odd characters', resources: () => [res('a', withMeta('Odd_Name', {}))], says: /resource "a": .*metadata\.name: Invalid value: "Odd_Name"/ },
  { title: '"!{}" as a data key', resources: (i) => [res('a', cm(`ekey-${i}`, { data: { '!{}': 'v' } }))], says: /resource "a": .*data\[!\{\}\]|resource "a": .*a valid config key must consist of/ },
  { title: 'Secret data that is not base64', resources: (i) => [res('a', { apiVersion: 'v1', kind: 'Secret', metadata: { name: `b64-${i}` }, data: { k: 'not base64 !!' } })], says: /resource "a": .*illegal base64/ },
  { title: 'an identity that may do nothing (a ServiceAccount that does not exist)', resources: (i) => [res('a', cm(`sa-${i}`))], spec: { serviceAccountName: 'nobody-here' }, says: /resource "a": .*system:serviceaccount:[a-z0-9-]+:nobody-here/ },
  {
    title: 'a Secret value copied into a label (redacted from the refusal)',
    before: () => [res('creds', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'suite-secret' } })],
    resources: (i) => [res('creds', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'suite-secret' } }), res('leak', withMeta(`leak-${i}`, { labels: { pw: '!{pw}' } }), [{ name: 'pw', resource: 'creds', path: 'data.password' }])],
    says: /resource "leak": .*\[redacted\]/,
  },
];

/** Refused at the door by the CRD's schema: the apply fails and its error names the field. */
const doorCases: { title: string; resources: RawResource[]; says: RegExp }[] = [
  { title: 'duplicate resource names (resources is a list keyed by name)', resources: [res('a', cm('dup1')), res('a', cm('dup2'))], says: /duplicate entries for key \[name="a"\]/ },
  { title: 'a self reference (a CEL rule)', resources: [res('a', cm('self'), [{ resource: 'a' }])], says: /spec\.resources\[0\]\.references: Invalid value: a resource may not reference itself/ },
  { title: '10,000 resources', resources: Array.from({ length: 10_000 }, (_, i) => res(`r${i}`, cm(`many-${i}`))), says: /spec\.resources: Too many: 10000: must have at most 256 items/ },
  { title: '33 references', resources: [res('a', cm('refs'), Array.from({ length: 33 }, () => ({ resource: 'b' }))), res('b', cm('refs-b'))], says: /spec\.resources\[0\]\.references: Too many: 33: must have at most 32 items/ },
  { title: 'an empty resource name', resources: [res('', cm('empty'))], says: /spec\.resources\[0\]\.name/ },
  { title: 'a resource name with upper case', resources: [res('Upper', cm('upper'))], says: /spec\.resources\[0\]\.name/ },
  { title: 'an object without a name', resources: [res('a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} })], says: /spec\.resources\[0\]\.spec\.object\.metadata\.name: Required value/ },
  { title: 'an object without a kind', resources: [res('a', { apiVersion: 'v1', metadata: { name: 'nokind' } })], says: /spec\.resources\[0\]\.spec\.object\.kind: Required value/ },
];

let env: TestEnv;
let ns: string;
let t: KnownTypes;
let operator: OperatorProcess | undefined;
let logFile = '';
let metricsPort = 0;

function manifest(name: string, resources: RawResource[], spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name, namespace: ns }, spec: { ...spec, resources } };
}
const applyRaw = (name: string, resources: RawResource[], spec?: Record<string, unknown>): Promise<KubeObject> => env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(name, resources, spec), { fieldManager: 'test-user', force: true });

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'badinput');
  t = await types(env);
  metricsPort = await freePort();
  operator = startOperatorProcess(['--namespace', ns, '--log-level', 'trace', '--gc', 'off', '--metrics-addr', `127.0.0.1:${metricsPort}`]);
  logFile = operator.logFile;
  const secrets = await resourceType(env, 'v1', 'Secret');
  await env.client.create(secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'suite-secret', namespace: ns }, data: { password: PASSWORD_B64 } });
}, 60_000);

afterAll(async () => {
  await operator?.terminate();
  env.close();
});

it(`has at least 50 cases (${operatorCases.length + doorCases.length})`, () => {
  expect(operatorCases.length + doorCases.length).toBeGreaterThanOrEqual(50);
});

it('every bad Bundle is answered by a clear condition, deletes nothing, and leaves its neighbour reconciling; nothing secret leaves', async () => {
  await applyBundle(env, ns, 'neighbour', [{ name: 'n', object: configMap('neighbour-cm') }]);
  await waitForReady(env, ns, 'neighbour');
  const neighbourObject = await env.client.get(t.configMap, ns, 'neighbour-cm');

  // 1. Each case Bundle first holds an object of its own.
  await Promise.all(operatorCases.map((c, i) => applyRaw(`case-${i}`, [res('keep', cm(`keep-${i}`)), ...(c.before?.(i) ?? [])])));
  await waitFor('every case Bundle to be Ready', async () => {
    const { items } = await env.client.list(BUNDLE_RESOURCE_TYPE, ns);
    return operatorCases.every((_, i) => conditionOf(items.find((b) => b.metadata.name === `case-${i}`), 'Ready')?.status === 'True');
  }, { timeoutMs: 120_000 });
  const kept = new Map<number, string | undefined>();
  for (let i = 0; i < operatorCases.length; i++) kept.set(i, (await env.client.get(t.configMap, ns, `keep-${i}`)).metadata.uid);

  // 2. Then the bad spec, which no longer lists that object.
  await Promise.all(operatorCases.map((c, i) => applyRaw(`case-${i}`, c.resources(i), c.spec)));
  let unanswered: string[] = [];
  const answers = await waitFor('every case to be answered by an Error condition', async () => {
    const { items } = await env.client.list(BUNDLE_RESOURCE_TYPE, ns);
    const out = operatorCases.map((c, i) => {
      const b = items.find((x) => x.metadata.name === `case-${i}`);
      const error = conditionOf(b, 'Error');
      return { title: c.title, ok: b?.metadata.generation === (b?.status as { observedGeneration?: number } | undefined)?.observedGeneration && error?.status === 'True' && c.says.test(error.message ?? ''), message: error?.message };
    });
    unanswered = out.filter((a) => !a.ok).map((a) => `${a.title}: ${a.message ?? '(no Error condition)'}`);
    return unanswered.length === 0 ? out : false;
  }, { timeoutMs: 180_000, intervalMs: 1_000 }).catch((err: unknown) => {
    throw new Error(`${String(err)}\nunanswered:\n${unanswered.join('\n')}`);
  });
  expect(answers).toHaveLength(operatorCases.length);

  // 3. Nothing was deleted: each case's earlier object is the same object, not being deleted.
  for (let i = 0; i < operatorCases.length; i++) {
    const o = await env.client.get(t.configMap, ns, `keep-${i}`);
    expect({ case: operatorCases[i]?.title, uid: o.metadata.uid, deleting: o.metadata.deletionTimestamp }).toEqual({ case: operatorCases[i]?.title, uid: kept.get(i), deleting: undefined });
  }
  // The Secret a case adopted (by name) was not deleted either.
  expect((await env.client.get(await resourceType(env, 'v1', 'Secret'), ns, 'suite-secret')).metadata.deletionTimestamp).toBeUndefined();

  // 4. The neighbour still reconciles: an edit is applied to the same object.
  await applyBundle(env, ns, 'neighbour', [{ name: 'n', object: configMap('neighbour-cm', { key: 'edited' }) }]);
  const edited = await waitFor('the neighbour\'s edit', async () => {
    const o = await env.client.get(t.configMap, ns, 'neighbour-cm');
    return (o.data as Record<string, string> | undefined)?.['key'] === 'edited' ? o : undefined;
  });
  expect(edited.metadata.uid).toBe(neighbourObject.metadata.uid);

  // 5. The heap stayed bounded (the 1 MiB string and the 1,000-deep object included).
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const heapUsed = Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? 'NaN');
  expect(heapUsed).toBeLessThan(256 * 1024 * 1024);

  // 6. Nothing the operator wrote holds the Secret's value: status, events (both APIs), its log at trace.
  const { items: bundles } = await env.client.list(BUNDLE_RESOURCE_TYPE, ns);
  const events = await env.client.list(await resourceType(env, 'events.k8s.io/v1', 'Event'), ns);
  const coreEvents = await env.client.list(await resourceType(env, 'v1', 'Event'), ns);
  await operator?.terminate();
  operator = undefined;
  const log = await readFile(logFile, 'utf8');
  expect(log).toContain('apply failed');
  for (const text of [JSON.stringify(bundles.map((b) => b.status)), JSON.stringify(events.items), JSON.stringify(coreEvents.items), log]) {
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(PASSWORD_B64);
  }
}, 420_000);

describe('refused at the door by the CRD schema, naming the field', () => {
  it.each(doorCases.map((c) => [c.title, c] as const))('%s', async (_title, c) => {
    const before = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'door');
    await expect(applyRaw('door', c.resources)).rejects.toThrow(c.says);
    // Refused: the stored Bundle, if any, did not change.
    expect((await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'door'))?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
  });
});
