/**
 * What the red teams' release write-back tests share: deleting a Bundle the
 * way a user does (kubectl, not waiting), a snapshot of the release the
 * finalizer wrote (stamp, proof, the former-bundle marks), the record of a
 * release, and watching an object stay kept for a
 * while (the same uid, no deletionTimestamp, every second).
 */
import { Annotations, Labels } from '../../src/api/names.js';
import { DEFAULT_RELEASE_KEY_SECRET } from '../../src/controllers/softdelete/release-key.js';
import { jsonPointerSegment } from '../../src/core/bundle/objects.js';
import type { ResourceType } from '../../src/kube/types.js';
import { expectKept, resourceType, run, waitFor, type TestEnv } from './harness.js';
import { applyBundle, configMap, getBundle, waitForReady, type ResourceFixture } from './bundles.js';
import { releaseProofFor } from './operator.js';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `kubectl delete bundle` without waiting, then waits until the Bundle is gone (its finalizer released what it listed). */
export async function deleteBundle(env: TestEnv, ns: string, name: string, cascade?: 'orphan'): Promise<void> {
  const r = await run('kubectl', ['delete', 'bundle', name, '-n', ns, '--wait=false', ...(cascade ? [`--cascade=${cascade}`] : [])]);
  if (r.code !== 0) throw new Error(r.stderr);
  await waitFor(`Bundle ${name} to be gone`, async () => (await getBundle(env, ns, name)) === undefined, { timeoutMs: 60_000 });
}

/** A released object's marks as the finalizer wrote them: what someone who read it could write back later. */
export interface ReleaseSnapshot {
  uid: string;
  stamp: string | undefined;
  proof: string | undefined;
  label: string | undefined;
  former: string | undefined;
}

/** Reads the release an object carries now. */
export async function releaseSnapshot(env: TestEnv, rt: ResourceType, ns: string, name: string): Promise<ReleaseSnapshot> {
  const o = await env.client.get(rt, ns, name);
  return {
    uid: o.metadata.uid ?? '',
    stamp: o.metadata.annotations?.[Annotations.deletionTimestamp],
    proof: o.metadata.annotations?.[Annotations.releaseProof],
    label: o.metadata.labels?.[Labels.formerBundle],
    former: o.metadata.annotations?.[Annotations.formerBundle],
  };
}

/** Where the test operator keeps the record of an object's release (the release key Secret default/bundlesmith-release-key). */
export const RELEASE_RECORDS_NAMESPACE = 'default';
export const releaseRecordName = (uid: string): string => `${DEFAULT_RELEASE_KEY_SECRET}-${uid}`;

/** The data of the record of an object's release; undefined where there is none. */
export async function releaseRecordOf(env: TestEnv, uid: string): Promise<Record<string, string> | undefined> {
  const record = await env.client.tryGet(await resourceType(env, 'v1', 'ConfigMap'), RELEASE_RECORDS_NAMESPACE, releaseRecordName(uid));
  return record === undefined ? undefined : ((record as { data?: Record<string, string> }).data ?? {});
}

/**
 * Watches an object for `ms`, once a second, and asserts it was kept
 * throughout (the same uid, no deletionTimestamp); logs the stamp it showed
 * last if it was deleted.
 */
export async function expectKeptFor(env: TestEnv, rt: ResourceType, ns: string, name: string, uid: string, ms: number): Promise<void> {
  let lastStamp: string | undefined;
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const o = await env.client.tryGet(rt, ns, name);
    if (o === undefined || o.metadata.deletionTimestamp !== undefined) {
      console.log(`${name} deleted; last stamp seen: ${lastStamp}`);
      break;
    }
    lastStamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
    await sleep(1_000);
  }
  expectKept(await env.client.tryGet(rt, ns, name), uid);
}

/**
 * Bundle `bundle` applied with `resources` until Ready, then deleted: the
 * release of `name` (a `rt`) its finalizer wrote, checked to carry a stamp,
 * a proof and the former-bundle marks.
 */
export async function releasedBy(
  env: TestEnv,
  ns: string,
  bundle: string,
  resources: ResourceFixture[],
  rt: ResourceType,
  name: string,
): Promise<ReleaseSnapshot> {
  await applyBundle(env, ns, bundle, resources);
  await waitForReady(env, ns, bundle);
  await deleteBundle(env, ns, bundle);
  const released = await releaseSnapshot(env, rt, ns, name);
  expect(released.stamp).toBeDefined();
  expect(released.proof).toBeDefined();
  expect(released.label).toBeDefined();
  expect(released.former).toBe(bundle);
  return released;
}

/**
 * A ConfigMap as an earlier version released it (a v2 proof, signed by the
 * test's release key, and no record, as after an upgrade): created plain,
 * then its release's marks (the former Bundle, the delay, the stamp) and the
 * proof over them written in one patch, as that version's finalizer wrote
 * them (marks without a proof, seen by a listing, would be recorded ended).
 * The proof is returned, for a test to write it back.
 * `beforeSigning`: what that version wrote before its patch (its record).
 */
export async function legacyRelease(
  env: TestEnv,
  ns: string,
  name: string,
  marks: { formerBundle: string; delay: string; stamp: string; takenOff?: 'stamp' | 'proof' },
  beforeSigning?: (uid: string, proof: string) => Promise<void>,
): Promise<{ uid: string; proof: string }> {
  const configMaps = await resourceType(env, 'v1', 'ConfigMap');
  const created = await env.client.create(configMaps, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns },
    data: { key: 'v' },
  });
  const labels = { [Labels.formerBundle]: marks.formerBundle };
  const annotations: Record<string, string> = {
    [Annotations.formerBundle]: marks.formerBundle,
    [Annotations.deletionDelay]: marks.delay,
    [Annotations.deletionTimestamp]: marks.stamp,
  };
  const signed = await releaseProofFor({ ...created.metadata, labels, annotations }, 'v2');
  const uid = created.metadata.uid ?? '';
  const proof = signed[Annotations.releaseProof] ?? '';
  await beforeSigning?.(uid, proof);
  // `takenOff`: the stamp or the proof left out of the same write (taken off by hand: the operator never sees them together).
  const written =
    marks.takenOff === 'stamp'
      ? { ...annotations, ...signed, [Annotations.deletionTimestamp]: null }
      : marks.takenOff === 'proof'
        ? annotations
        : { ...annotations, ...signed };
  await env.client.patch(configMaps, ns, name, { metadata: { labels, annotations: written } }, 'merge');
  return { uid, proof };
}

/** A Deployment that never becomes Ready here (no workload controllers run on the shared control plane). */
export const NEVER_READY_DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] } },
  },
};

/**
 * Bundle `bundle` listing ConfigMap `name` (its delay `delay`) behind
 * NEVER_READY_DEPLOYMENT: the ConfigMap stays Blocked, so the Bundle lists
 * it and never takes hold. Applying the Bundle with the Deployment alone
 * drops it.
 */
export async function blockedListing(env: TestEnv, ns: string, bundle: string, name: string, delay: string): Promise<void> {
  await applyBundle(env, ns, bundle, [
    { name: 'web', object: NEVER_READY_DEPLOYMENT },
    { name: 'c', references: [{ resource: 'web' }], object: configMap(name, { key: 'v' }, { [Annotations.deletionDelay]: delay }) },
  ]);
}

/** Takes the release's marks off the object (its stamp, the former-bundle label and annotation, the proof), as `bundlesmith cancel` does. */
export async function takeReleaseOff(env: TestEnv, rt: ResourceType, ns: string, name: string, uid: string): Promise<void> {
  const a = (key: string): string => `/metadata/annotations/${jsonPointerSegment(key)}`;
  await env.client.patch(
    rt,
    ns,
    name,
    [
      { op: 'test', path: '/metadata/uid', value: uid },
      { op: 'remove', path: a(Annotations.deletionTimestamp) },
      { op: 'remove', path: `/metadata/labels/${jsonPointerSegment(Labels.formerBundle)}` },
      { op: 'remove', path: a(Annotations.formerBundle) },
      { op: 'remove', path: a(Annotations.releaseProof) },
    ],
    'json',
  );
}

/** Writes a release as the snapshot saw it back onto the object (a backup restored, a tool replaying what it read). */
export async function writeReleaseBack(env: TestEnv, rt: ResourceType, ns: string, name: string, released: ReleaseSnapshot): Promise<void> {
  await env.client.patch(
    rt,
    ns,
    name,
    {
      metadata: {
        labels: { [Labels.formerBundle]: released.label },
        annotations: {
          [Annotations.formerBundle]: released.former,
          [Annotations.deletionTimestamp]: released.stamp,
          [Annotations.releaseProof]: released.proof,
        },
      },
    },
    'merge',
  );
}
