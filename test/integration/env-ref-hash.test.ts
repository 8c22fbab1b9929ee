/**
 * Issue 15: Smith's envRefHash on the real apiserver. Smith's own scenario
 * (TestConfigMapAndSecretToDeploymentToBundleIndex): a Bundle's Deployment
 * reads a ConfigMap and a Secret made outside the Bundle; its pod template
 * carries Smith's three values as first the ConfigMap and then the Secret
 * change, each change reaching only the workloads that read it (the watch's
 * index), without a Bundle edit. Also: a missing source blocks the workload
 * until it exists; the Bundle's own ConfigMap is applied before the
 * workload hashes it; rollOnChange: volumes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';
import { Annotations, Reasons } from '../../src/api/names.js';
import type { KubeObject } from '../../src/kube/types.js';
import { applyBundle, configMap, resourceCondition, waitForBundle } from './bundles.js';
import { run, waitFor } from './harness.js';
import { operatorFixture } from './operator.js';

const f = operatorFixture('envhash');

const SMITH = {
  initial: '97b5461821487e047e760880764dd9b31a5b7f39e8961b98b809c6d3f5b3cf3a',
  configMapChanged: '5fb60505d125dd42160a9ef237873345020a90e8d607861ced50a641c3a800a9',
  secretChanged: '20ed86a5106aab7e892f498f38dc1b713405d864878e6a074377fbdcba129599',
};

function deployment(name: string, podSpec: Record<string, unknown>, annotations?: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: podSpec } },
  };
}

const container = (extra: Record<string, unknown>) => ({ containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', ...extra }] });
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function templateHash(name: string): Promise<string | undefined> {
  const d = await f.env.client.tryGet(f.t.deployment, f.ns, name);
  const template = (d?.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined)?.template;
  return template?.metadata?.annotations?.[Annotations.envRefHash];
}

async function hashBecomes(name: string, expected: string): Promise<void> {
  await waitFor(`${name}'s envRefHash = ${expected.slice(0, 12)}…`, async () => (await templateHash(name)) === expected);
}

async function generation(name: string): Promise<number | undefined> {
  return (await f.env.client.tryGet(f.t.deployment, f.ns, name))?.metadata.generation;
}

it("Smith's scenario: the template carries Smith's values as the ConfigMap and then the Secret change, only on the workloads that read them", async () => {
  await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'map1', namespace: f.ns },
    data: { a: 'b' },
  });
  await f.env.client.create(f.t.secret, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'secret1', namespace: f.ns },
    data: { x: b64('b') },
  });
  await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'other', namespace: f.ns },
    data: { k: 'v' },
  });
  await applyBundle(f.env, f.ns, 'smith', [
    {
      name: 'reader',
      object: deployment('reader', container({ envFrom: [{ configMapRef: { name: 'map1' } }, { secretRef: { name: 'secret1' } }] })),
    },
    {
      name: 'bystander',
      object: deployment('bystander', container({ env: [{ name: 'K', valueFrom: { configMapKeyRef: { name: 'other', key: 'k' } } }] })),
    },
  ]);
  await hashBecomes('reader', SMITH.initial);
  const bystander = await waitFor('bystander hashed', () => templateHash('bystander'));
  const bystanderGeneration = await generation('bystander');

  const cm = await f.env.client.get(f.t.configMap, f.ns, 'map1');
  await f.env.client.patch(
    f.t.configMap,
    f.ns,
    'map1',
    { data: { a: 'b', b: 'a' }, metadata: { resourceVersion: cm.metadata.resourceVersion } },
    'merge',
  );
  await hashBecomes('reader', SMITH.configMapChanged);

  await f.env.client.patch(f.t.secret, f.ns, 'secret1', { data: { z: b64('c') } }, 'merge');
  await hashBecomes('reader', SMITH.secretChanged);

  // The ConfigMap the bystander does not read changed twice: its Deployment was not written.
  expect(await templateHash('bystander')).toBe(bystander);
  expect(await generation('bystander')).toBe(bystanderGeneration);
});

it('a missing source that is not optional blocks the workload with EnvSourceNotFound until it exists; an optional one does not', async () => {
  await applyBundle(f.env, f.ns, 'missing', [
    { name: 'needs', object: deployment('needs', container({ envFrom: [{ secretRef: { name: 'later' } }] })) },
    { name: 'optional', object: deployment('optional', container({ envFrom: [{ configMapRef: { name: 'never', optional: true } }] })) },
  ]);
  const blocked = await waitForBundle(
    f.env,
    f.ns,
    'missing',
    'needs blocked',
    (b) => resourceCondition(b, 'needs', 'Blocked')?.status === 'True',
  );
  const condition = resourceCondition(blocked, 'needs', 'Blocked');
  expect(condition?.reason).toBe(Reasons.EnvSourceNotFound);
  expect(condition?.message).toContain('Secret "later" not found');
  expect(await f.env.client.tryGet(f.t.deployment, f.ns, 'needs')).toBeUndefined();
  await waitFor('optional applied', () => templateHash('optional'));

  await f.env.client.create(f.t.secret, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'later', namespace: f.ns },
    stringData: { token: 't' },
  });
  await waitFor('needs applied once its Secret exists', () => templateHash('needs'));
  const after = await waitForBundle(
    f.env,
    f.ns,
    'missing',
    'needs no longer blocked',
    (b) => resourceCondition(b, 'needs', 'Blocked')?.status !== 'True',
  );
  expect(resourceCondition(after, 'needs', 'Blocked')?.status).not.toBe('True');
});

it("the Bundle's own ConfigMap: one edit of it and of the workload is applied ConfigMap first and rolls the workload once, to the hash of the applied data", async () => {
  const resources = (value: string, image: string) => [
    { name: 'settings', object: configMap('settings', { mode: value }) },
    {
      name: 'app',
      object: deployment('own-app', {
        containers: [{ name: 'app', image, env: [{ name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } }] }],
      }),
    },
  ];
  await applyBundle(f.env, f.ns, 'own', resources('a', 'registry.k8s.io/pause:3.10'));
  const first = await waitFor('own-app hashed', () => templateHash('own-app'));
  const firstGeneration = await generation('own-app');

  // Without the wait for the ConfigMap, the new image would go out with the old hash, and the new hash a pass later: two rollouts.
  await applyBundle(f.env, f.ns, 'own', resources('b', 'registry.k8s.io/pause:3.9'));
  await waitFor('own-app rehashed', async () => ((await templateHash('own-app')) !== first ? true : undefined));
  // One template change for one ConfigMap change: generation moved by exactly one.
  expect(await generation('own-app')).toBe((firstGeneration ?? 0) + 1);
  const settings = await f.env.client.get(f.t.configMap, f.ns, 'settings');
  expect((settings as KubeObject & { data?: Record<string, string> }).data).toEqual({ mode: 'b' });
});

it('rollOnChange: volumes: a mounted ConfigMap changes the hash only with the annotation', async () => {
  await f.env.client.create(f.t.configMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'files', namespace: f.ns },
    data: { 'app.conf': 'v1' },
  });
  const mounting = {
    volumes: [{ name: 'files', configMap: { name: 'files' } }],
    ...container({
      volumeMounts: [{ name: 'files', mountPath: '/etc/app' }],
      envFrom: [{ configMapRef: { name: 'map1', optional: true } }],
    }),
  };
  await applyBundle(f.env, f.ns, 'volumes', [
    { name: 'opted', object: deployment('opted', mounting, { [Annotations.rollOnChange]: 'volumes' }) },
    { name: 'plain', object: deployment('plain', mounting) },
  ]);
  const opted = await waitFor('opted hashed', () => templateHash('opted'));
  const plain = await waitFor('plain hashed', () => templateHash('plain'));
  expect(opted).not.toBe(plain);

  await f.env.client.patch(f.t.configMap, f.ns, 'files', { data: { 'app.conf': 'v2' } }, 'merge');
  await waitFor('opted rehashed', async () => ((await templateHash('opted')) !== opted ? true : undefined));
  expect(await templateHash('plain')).toBe(plain);
});

it('the example: the Deployment reads its ConfigMap by a reference ("!{config-name}"); editing greeting in the Bundle rolls it once', async () => {
  const path = join(repoRoot(), 'examples', 'configmap-secret-deployment.yaml');
  expect((await run('kubectl', ['apply', '-n', f.ns, '-f', path])).code).toBe(0);
  const first = await waitFor('web hashed', () => templateHash('web'));
  const firstGeneration = await generation('web');
  const edited = readFileSync(path, 'utf8').replace('greeting: hello', 'greeting: bonjour');
  expect((await run('kubectl', ['apply', '-n', f.ns, '-f', '-'], { input: edited })).code).toBe(0);
  await waitFor('web rehashed', async () => ((await templateHash('web')) !== first ? true : undefined));
  expect(await generation('web')).toBe((firstGeneration ?? 0) + 1);
});
