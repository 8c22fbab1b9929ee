/**
 * Keeps the Bundle's ApplySet parent metadata (core/bundle/applyset-parent.ts)
 * on the live Bundle: the id label, the tooling annotation and
 * contains-group-kinds over status.managedKinds. Run by the act phase after
 * the kind inventory's write-ahead and before any claim or apply, so that
 * contains-group-kinds covers a new kind before the first object of it
 * carries the part-of label, as the KEP asks of a parent.
 *
 * One server-side apply, under a field manager of its own that owns these
 * three fields and nothing else: the user's (or Helm's) labels and
 * annotations on the Bundle are neither taken nor dropped, and a later
 * `helm upgrade` or `kubectl apply` of the Bundle does not remove them
 * either (they are not that manager's). Nothing here deletes, and nothing
 * reads these fields back to decide anything but whether to write them.
 */
import type { Bundle } from '../../api/bundle.js';
import { API_VERSION, APPLYSET_FIELD_MANAGER } from '../../api/names.js';
import { applySetParentApply, applySetParentMetadata, carriesParentMetadata } from '../../core/bundle/applyset-parent.js';
import { isLiveIncarnation } from '../../core/bundle/pass-guards.js';
import { isRecord } from '../../core/bundle/objects.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import { isConflict, isNotFound } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { BundleApi } from './api.js';

/**
 * Writes the parent metadata when the Bundle (`fresh` when the pass read it,
 * else the cached one) does not carry it: the Bundle as written, or true
 * when nothing was to write. False when the write lost to a change of the
 * Bundle (409) or the Bundle is gone or another incarnation: the pass
 * writes nothing more and is decided again.
 */
export async function syncApplySetParent(
  d: { api: BundleApi; log: Logger },
  bundle: Bundle,
  fresh: KubeObject | undefined,
): Promise<KubeObject | boolean> {
  const { name, namespace, uid } = bundle.metadata;
  const read = fresh ?? bundle;
  const wanted = applySetParentMetadata({ name, namespace }, managedKindsOf(read));
  if (carriesParentMetadata(read.metadata, wanted)) return true;
  const live = fresh ?? (await d.api.tryGet(BUNDLE_RESOURCE_TYPE, namespace, name));
  if (live === undefined || !isLiveIncarnation(live, uid) || live.metadata.resourceVersion === undefined) return false;
  // Read again when the cache was behind: the kinds recorded now are what the annotation must cover.
  const current = live === fresh ? wanted : applySetParentMetadata({ name, namespace }, managedKindsOf(live));
  if (live !== fresh && carriesParentMetadata(live.metadata, current)) return true;
  try {
    const written = await d.api.apply(
      BUNDLE_RESOURCE_TYPE,
      applySetParentApply({ name, namespace, uid, resourceVersion: live.metadata.resourceVersion, apiVersion: API_VERSION }, current),
      { fieldManager: APPLYSET_FIELD_MANAGER, force: true },
    );
    d.log.debug({ labels: current.labels, annotations: current.annotations }, "wrote the Bundle's ApplySet parent metadata");
    return written;
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return false;
    throw err;
  }
}

function managedKindsOf(o: Bundle | KubeObject): string[] {
  const kinds = isRecord(o.status) ? o.status['managedKinds'] : undefined;
  return Array.isArray(kinds) ? kinds.filter((k): k is string => typeof k === 'string') : [];
}
