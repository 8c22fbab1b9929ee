/**
 * A Bundle that lists a released object cancels its countdown. The take-hold
 * says so on the object, but it may not land: an admission policy or RBAC
 * may refuse the write, and a Bundle listing the object at a version the
 * server no longer serves cannot apply it at all. So each pass first records
 * the cancel where only the operator writes (softdelete/release-records.ts):
 * the stamp on the object then never counts again, whichever process sweeps
 * it and whenever its watch began (red team 27). An object listed at a
 * version no longer served is read at the version the server serves for its
 * group and kind.
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
 * lists: `atCoordinates` as read, and objects listed at a version not
 * served, read now. A failure is logged and left to the next pass.
 */
export async function recordListingCancels(
  d: { releaseRecords: Pick<ReleaseRecords, 'recordListingCancel'> },
  api: Pick<BundleApi, 'resolveGroupKind' | 'tryGet'>,
  bundle: Bundle,
  listed: { specObjects: readonly KubeObjectManifest[]; types: ReadonlyMap<string, ResourceType>; atCoordinates: readonly LiveObject[] },
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  const namespace = bundle.metadata.namespace;
  try {
    for (const o of listed.atCoordinates) await d.releaseRecords.recordListingCancel(o);
    for (const o of listed.specObjects) {
      if (listed.types.has(kindKey(o.apiVersion, o.kind))) continue;
      const found = await api.resolveGroupKind(groupOf(o.apiVersion), o.kind);
      if (found.state !== 'served' || !found.type.namespaced) continue;
      const live = await api.tryGet(found.type, namespace, o.metadata.name);
      if (live !== undefined)
        await d.releaseRecords.recordListingCancel({ ...live, apiVersion: found.type.apiVersion, kind: found.type.kind });
    }
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'recording the cancel of a listed released object failed; the next pass tries again');
  }
}
