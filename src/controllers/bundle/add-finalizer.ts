import type { Bundle } from '../../api/bundle.js';
import { FIELD_MANAGER, Finalizers } from '../../api/names.js';
import { interruptedStatus } from '../../core/bundle/exit-status.js';
import { withSpecKinds } from '../../core/bundle/kind-inventory.js';
import { BUNDLE_RESOURCE_TYPE } from '../../kube/bundle-resource.js';
import type { KubeClient } from '../../kube/client.js';
import { isConflict, isNotFound } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/types.js';
import { nextOnly, type PassReport } from './pass-report.js';
import { statusSubject } from './status-writer.js';

/** Adds the finalizer, and says in status that the first pass comes next (the update wakes us). */
export async function addFinalizer(client: KubeClient, bundle: Bundle, nowIso: string): Promise<PassReport> {
  const { namespace, name } = bundle.metadata;
  let updated: KubeObject;
  try {
    updated = await client.patch(
      BUNDLE_RESOURCE_TYPE,
      namespace,
      name,
      {
        metadata: {
          finalizers: [...(bundle.metadata.finalizers ?? []), Finalizers.deleteResources],
          resourceVersion: bundle.metadata.resourceVersion,
        },
      },
      'merge',
      { fieldManager: FIELD_MANAGER },
    );
  } catch (err) {
    if (isConflict(err) || isNotFound(err)) return nextOnly({ kind: 'idle' }); // a newer version comes through the watch
    throw err;
  }
  // With the spec's kinds recorded in status.managedKinds (the write-ahead recordKindsFirst makes otherwise): the
  // first pass then writes objects without a status write of its own first. Recording more kinds only widens what
  // the finalizer looks at.
  return {
    status: {
      over: updated,
      status: withSpecKinds(interruptedStatus(statusSubject(updated), 'finalizer added; reconciling', nowIso), bundle),
    },
    next: { kind: 'idle' },
  };
}
