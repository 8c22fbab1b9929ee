/** The Bundle resource type, for clients, informers and the CLI (discovery is not needed to find it). */
import type { ResourceType } from './types.js';
import { API_VERSION, BUNDLE_KIND, BUNDLE_PLURAL, GROUP, VERSION } from '../api/names.js';

export const BUNDLE_RESOURCE_TYPE: ResourceType = {
  group: GROUP,
  version: VERSION,
  apiVersion: API_VERSION,
  kind: BUNDLE_KIND,
  plural: BUNDLE_PLURAL,
  namespaced: true,
  verbs: ['get', 'list', 'watch', 'update', 'patch'],
};
