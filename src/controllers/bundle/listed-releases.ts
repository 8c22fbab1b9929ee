/**
 * A Bundle that lists a released object cancels its countdown. The take-hold
 * says so on the object, but it may not land: an admission policy or RBAC
 * may refuse the write, and a Bundle listing the object at a version the
 * server no longer serves cannot apply it at all. So each pass first records
 * the cancel where only the operator writes (softdelete/release-records.ts):
 * the stamp on the object then never counts again, whichever process sweeps
 * it and whenever its watch began (red team 27). An object listed at a
 * version no longer served, or that the Bundle's identity may not read, is
 * read as the operator (at the version the server serves for its group and
 * kind): a listing cancels whoever may read the object, and the sweep may
 * not watch its kind yet (red team 40). A pass that gathers nothing (a watch
 * it waits for cannot list, a spec the schema rejects) reads every listed
 * object as the operator: the sweep that would see the listing may run in
 * another shard, away meanwhile (red team 41).
 */
import type { Bundle } from '../../api/bundle.js';
import type { KubeObjectManifest } from '../../api/resource.js';
import { groupOf, isRequestableName, kindKey, type LiveObject } from '../../core/bundle/objects.js';
import { isLiveBundle, listedObjects, type ListedObject } from '../../core/bundle/ownership.js';
import type { Discovery } from '../../kube/discovery.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import { errorMessage } from '../../kube/errors.js';
import type { ReleaseRecords } from '../softdelete/release-records.js';

type ListingRecords = { releaseRecords: Pick<ReleaseRecords, 'recordListingCancel' | 'recordListingCancelAt'> };

/** Runs one record write; a failure is logged and left to the next pass. */
async function recording(log: Pick<Logger, 'warn'>, name: string, what: () => Promise<void>): Promise<void> {
  try {
    await what();
  } catch (err) {
    log.warn({ name, err: errorMessage(err) }, 'recording the cancel of a listed released object failed; the next pass tries again');
  }
}

/**
 * Records the cancel of every countdown of a released object the Bundle
 * lists: `atCoordinates` as read; objects whose read the Bundle's identity
 * was refused (`readFailures`, by resource name) and objects listed at a
 * version not served, read now as the operator.
 */
export async function recordListingCancels(
  d: ListingRecords,
  discovery: Pick<Discovery, 'resolveGroupKind'>,
  bundle: Bundle,
  gathered: {
    specObjects: readonly KubeObjectManifest[];
    types: ReadonlyMap<string, ResourceType>;
    atCoordinates: readonly LiveObject[];
    readFailures: ReadonlyMap<string, unknown>;
  },
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  const namespace = bundle.metadata.namespace;
  for (const o of gathered.atCoordinates) await recording(log, o.metadata.name, () => d.releaseRecords.recordListingCancel(o));
  for (const r of bundle.spec.resources) {
    const o = r.spec.object;
    const rt = o && gathered.readFailures.has(r.name) ? gathered.types.get(kindKey(o.apiVersion, o.kind)) : undefined;
    if (o && rt?.namespaced)
      await recording(log, o.metadata.name, () => d.releaseRecords.recordListingCancelAt(rt, namespace, o.metadata.name));
  }
  const unserved = gathered.specObjects.filter((o) => !gathered.types.has(kindKey(o.apiVersion, o.kind)));
  await recordListingCancelsAsOperator(
    d,
    discovery,
    unserved.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, namespace, name: o.metadata.name })),
    log,
  );
}

/** Records the cancel of every countdown of the listed objects, each read as the operator at the version served for its group and kind. */
export async function recordListingCancelsAsOperator(
  d: ListingRecords,
  discovery: Pick<Discovery, 'resolveGroupKind'>,
  listed: readonly ListedObject[],
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  for (const o of listed) {
    if (!isRequestableName(o.name)) continue;
    await recording(log, o.name, async () => {
      const found = await discovery.resolveGroupKind(groupOf(o.apiVersion), o.kind);
      if (found.state === 'served' && found.type.namespaced) await d.releaseRecords.recordListingCancelAt(found.type, o.namespace, o.name);
    });
  }
}

/**
 * For a live Bundle whose pass stopped before it gathered (its spec rejected
 * by the schema, the pass failed): what it lists, read leniently, each object
 * read as the operator. Another shard may sweep, away meanwhile (red teams 41
 * and 42).
 */
export async function recordLiveListingCancels(
  d: ListingRecords,
  discovery: Pick<Discovery, 'resolveGroupKind'>,
  bundle: KubeObject,
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  if (isLiveBundle(bundle)) await recordListingCancelsAsOperator(d, discovery, listedObjects(bundle), log);
}
