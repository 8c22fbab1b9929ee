/** The Bundle event target, shared by the controller and its finalizer. */
import type { Bundle } from '../../api/bundle.js';
import { API_VERSION, BUNDLE_KIND } from '../../api/names.js';
import type { EventTarget } from '../events.js';

// Kept for the finalizer's import; the constant lives in src/kube.
export { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';

export function bundleTarget(bundle: Bundle): EventTarget {
  return {
    apiVersion: API_VERSION,
    kind: BUNDLE_KIND,
    name: bundle.metadata.name,
    namespace: bundle.metadata.namespace,
    uid: bundle.metadata.uid,
  };
}
