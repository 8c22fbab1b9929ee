/** The Bundle resource type and event target, shared by the controller and its finalizer. */
import type { Bundle } from '../../api/bundle.js';
import { API_VERSION, BUNDLE_KIND, BUNDLE_PLURAL, GROUP, VERSION } from '../../api/names.js';
import type { ResourceType } from '../../kube/types.js';
import type { EventTarget } from '../events.js';

export const BUNDLE_RESOURCE_TYPE: ResourceType = {
  group: GROUP,
  version: VERSION,
  apiVersion: API_VERSION,
  kind: BUNDLE_KIND,
  plural: BUNDLE_PLURAL,
  namespaced: true,
  verbs: ['get', 'list', 'watch', 'update', 'patch'],
};

export function bundleTarget(bundle: Bundle): EventTarget {
  return { apiVersion: API_VERSION, kind: BUNDLE_KIND, name: bundle.metadata.name, namespace: bundle.metadata.namespace, uid: bundle.metadata.uid };
}
