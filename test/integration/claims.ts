/** What the red-team tests of claims share: deleting a Bundle to the end, and waiting for an object's fate. */
import { Annotations } from '../../src/api/names.js';
import { statusClaimsOf } from '../../src/core/bundle/claim-record.js';
import { BUNDLE_RESOURCE_TYPE } from '../../src/kube/bundle-resource.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import { waitFor, type TestEnv } from './harness.js';

/** Deletes the Bundle (its UID the precondition) and waits until it is gone: its finalizer has run. */
export async function deleteBundleAndWait(env: TestEnv, ns: string, name: string, uid: string | undefined): Promise<void> {
  await env.client.delete(BUNDLE_RESOURCE_TYPE, ns, name, { uid: uid ?? '' });
  await waitFor(`${name} to be gone`, async () => (await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, name)) === undefined, {
    timeoutMs: 60_000,
  });
}

/**
 * Waits until the object is gone (a collector deleted it) or carries no
 * reference to the Bundle with `bundleUid` (released); the object as found,
 * undefined when gone.
 */
export async function collectedOrFreeOf(
  env: TestEnv,
  rt: ResourceType,
  ns: string,
  name: string,
  bundleUid: string | undefined,
): Promise<KubeObject | undefined> {
  const found = await waitFor(
    `${name} collected or free of its claiming Bundle`,
    async () => {
      const cur = await env.client.tryGet(rt, ns, name);
      if (cur === undefined) return { cur };
      return (cur.metadata.ownerReferences ?? []).some((r) => r.uid === bundleUid) ? undefined : { cur };
    },
    { timeoutMs: 120_000 },
  );
  return found.cur;
}

/**
 * Waits until Bundle `bundleName` holds a claim on the object: its
 * non-controller reference on the object, the object's claimReferences
 * annotation naming it (unless `annotated` is false), and an entry for the
 * object in the Bundle's status.claims.
 */
export async function waitForRecordedClaim(
  env: TestEnv,
  ns: string,
  rt: ResourceType,
  bundleName: string,
  objectName: string,
  opts: { annotated?: boolean } = {},
): Promise<{ bundle: KubeObject; object: KubeObject }> {
  return await waitFor(`the recorded claim of ${bundleName} on ${objectName}`, async () => {
    const bundle = await env.client.tryGet(BUNDLE_RESOURCE_TYPE, ns, bundleName);
    const object = await env.client.tryGet(rt, ns, objectName);
    if (bundle === undefined || object === undefined) return undefined;
    const uid = bundle.metadata.uid ?? '!';
    const referenced = (object.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.controller !== true);
    const annotated = opts.annotated === false || (object.metadata.annotations?.[Annotations.claimReferences] ?? '').includes(uid);
    const recorded = (statusClaimsOf(bundle.status) ?? []).some((e) => e.uid === object.metadata.uid);
    return referenced && annotated && recorded ? { bundle, object } : undefined;
  });
}
