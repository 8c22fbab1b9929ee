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
 * not watch its kind yet (red team 40).
 */
import type { Bundle } from '../../api/bundle.js';
import type { KubeObjectManifest } from '../../api/resource.js';
import { groupOf, kindKey, type LiveObject } from '../../core/bundle/objects.js';
import type { ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import { errorMessage } from '../../kube/errors.js';
import type { ReleaseRecords } from '../softdelete/release-records.js';
import type { BundleApi } from './api.js';

/**
 * Records the cancel of every countdown of a released object the Bundle
 * lists: `atCoordinates` as read; objects whose read the Bundle's identity
 * was refused (`readFailures`, by resource name) and objects listed at a
 * version not served, read now as the operator. Where the pass gathered
 * nothing (`listed` undefined: a watch it waits for cannot list), every
 * listed object is read as the operator: the sweep that would see the
 * listing may run in another shard, or not at all meanwhile (red team 41).
 * A failure is logged and left to the next pass.
 */
export async function recordListingCancels(
  d: { releaseRecords: Pick<ReleaseRecords, 'recordListingCancel' | 'recordListingCancelAt'> },
  api: Pick<BundleApi, 'resolveGroupKind'>,
  bundle: Bundle,
  gathered:
    | {
        specObjects: readonly KubeObjectManifest[];
        types: ReadonlyMap<string, ResourceType>;
        atCoordinates: readonly LiveObject[];
        readFailures: ReadonlyMap<string, unknown>;
      }
    | undefined,
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  const listed = gathered ?? {
    specObjects: bundle.spec.resources.flatMap((r) => (r.spec.object ? [r.spec.object] : [])),
    types: new Map<string, ResourceType>(),
    atCoordinates: [],
    readFailures: new Map<string, unknown>(),
  };
  const namespace = bundle.metadata.namespace;
  const recording = async (what: () => Promise<void>, name?: string): Promise<void> => {
    try {
      await what();
    } catch (err) {
      log.warn({ name, err: errorMessage(err) }, 'recording the cancel of a listed released object failed; the next pass tries again');
    }
  };
  for (const o of listed.atCoordinates) await recording(() => d.releaseRecords.recordListingCancel(o), o.metadata.name);
  for (const r of bundle.spec.resources) {
    const o = r.spec.object;
    const rt = o && listed.readFailures.has(r.name) ? listed.types.get(kindKey(o.apiVersion, o.kind)) : undefined;
    if (o && rt?.namespaced) await recording(() => d.releaseRecords.recordListingCancelAt(rt, namespace, o.metadata.name), o.metadata.name);
  }
  for (const o of listed.specObjects) {
    if (listed.types.has(kindKey(o.apiVersion, o.kind))) continue;
    await recording(async () => {
      const found = await api.resolveGroupKind(groupOf(o.apiVersion), o.kind);
      if (found.state === 'served' && found.type.namespaced)
        await d.releaseRecords.recordListingCancelAt(found.type, namespace, o.metadata.name);
    }, o.metadata.name);
  }
}
