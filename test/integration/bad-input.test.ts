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
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import type { KubeObject } from '../../src/kube/types.js';
import { conditionOf, connect, createNamespace, resourceType, run, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, types, waitForReady, type KnownTypes } from './bundles.js';
import { cm, doorCases, operatorCases, res, type DoorCase, type RawResource } from './bad-input-cases.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

// 29 bytes: its base64 ends in '=', which no label value may hold, so the apiserver refuses (and echoes) it.
const PASSWORD = 'correct-horse-battery-staple!';
const PASSWORD_B64 = Buffer.from(PASSWORD).toString('base64');

let env: TestEnv;
let ns: string;
let t: KnownTypes;
let operator: OperatorProcess | undefined;
let logFile = '';
let metricsPort = 0;

function manifest(name: string, resources: RawResource[], spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', metadata: { name, namespace: ns }, spec: { ...spec, resources } };
}
const applyRaw = (name: string, resources: RawResource[], spec?: Record<string, unknown>): Promise<KubeObject> =>
  env.client.apply(BUNDLE_RESOURCE_TYPE, manifest(name, resources, spec), { fieldManager: 'test-user', force: true });

/** As a user would send it: `kubectl apply` (strict field validation) for the strict cases, the API client's apply for the others. */
async function applyDoorCase(c: DoorCase): Promise<void> {
  if (c.strict !== true) {
    await applyRaw('door', c.resources, c.spec);
    return;
  }
  const result = await run('kubectl', ['apply', '-f', '-'], { input: JSON.stringify(manifest('door', c.resources, c.spec)) });
  if (result.code !== 0) throw new Error(result.stderr);
}

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'badinput');
  t = await types(env);
  metricsPort = await freePort();
  operator = startOperatorProcess(['--namespace', ns, '--log-level', 'trace', '--gc', 'off', '--metrics-addr', `127.0.0.1:${metricsPort}`]);
  logFile = operator.logFile;
  const secrets = await resourceType(env, 'v1', 'Secret');
  await env.client.create(secrets, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'suite-secret', namespace: ns },
    data: { password: PASSWORD_B64 },
  });
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
  await waitFor(
    'every case Bundle to be Ready',
    async () => {
      const { items } = await env.client.list(BUNDLE_RESOURCE_TYPE, ns);
      return operatorCases.every(
        (_, i) =>
          conditionOf(
            items.find((b) => b.metadata.name === `case-${i}`),
            'Ready',
          )?.status === 'True',
      );
    },
    { timeoutMs: 120_000 },
  );
  const kept = new Map<number, string | undefined>();
  for (let i = 0; i < operatorCases.length; i++) kept.set(i, (await env.client.get(t.configMap, ns, `keep-${i}`)).metadata.uid);

  // 2. Then the bad spec, which no longer lists that object.
  await Promise.all(operatorCases.map((c, i) => applyRaw(`case-${i}`, c.resources(i), c.spec)));
  let unanswered: string[] = [];
  const answers = await waitFor(
    'every case to be answered by an Error condition',
    async () => {
      const { items } = await env.client.list(BUNDLE_RESOURCE_TYPE, ns);
      const out = operatorCases.map((c, i) => {
        const b = items.find((x) => x.metadata.name === `case-${i}`);
        const error = conditionOf(b, 'Error');
        return {
          title: c.title,
          ok:
            b?.metadata.generation === (b?.status as { observedGeneration?: number } | undefined)?.observedGeneration &&
            error?.status === 'True' &&
            c.says.test(error.message ?? ''),
          message: error?.message,
        };
      });
      unanswered = out.filter((a) => !a.ok).map((a) => `${a.title}: ${a.message ?? '(no Error condition)'}`);
      return unanswered.length === 0 ? out : false;
    },
    { timeoutMs: 180_000, intervalMs: 1_000 },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}\nunanswered:\n${unanswered.join('\n')}`);
  });
  expect(answers).toHaveLength(operatorCases.length);

  // 3. Nothing was deleted: each case's earlier object is the same object, not being deleted.
  for (let i = 0; i < operatorCases.length; i++) {
    const o = await env.client.get(t.configMap, ns, `keep-${i}`);
    expect({ case: operatorCases[i]?.title, uid: o.metadata.uid, deleting: o.metadata.deletionTimestamp }).toEqual({
      case: operatorCases[i]?.title,
      uid: kept.get(i),
      deleting: undefined,
    });
  }
  // The Secret a case adopted (by name) was not deleted either.
  expect((await env.client.get(await resourceType(env, 'v1', 'Secret'), ns, 'suite-secret')).metadata.deletionTimestamp).toBeUndefined();

  // 4. The neighbour still reconciles: an edit is applied to the same object.
  await applyBundle(env, ns, 'neighbour', [{ name: 'n', object: configMap('neighbour-cm', { key: 'edited' }) }]);
  const edited = await waitFor("the neighbour's edit", async () => {
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
    await expect(applyDoorCase(c)).rejects.toThrow(c.says);
    // Refused: the stored Bundle, if any, did not change.
    expect((await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, 'door'))?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
  });
});
