/**
 * Objects a Bundle references (controls or claims) that lack the managed
 * label are invisible to the label-selected caches: written by an operator
 * version that did not label, or with the label taken off since. Unseen,
 * they would never be pruned nor expire (kept, which is safe, but a leak).
 * So once per process, per identity, namespace and kind, a Bundle pass lists
 * the kind (metadata only, through the Bundle's own port) and labels what it
 * finds. The label decides nothing; only ownerReferences do.
 */
import { FIELD_MANAGER, Labels } from '../../api/names.js';
import { isBundleReference } from '../../core/bundle/owner-references.js';
import { errorMessage, isForbidden, isNotFound, isStaleWrite } from '../../kube/errors.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { Logger } from '../../observability/logger.js';
import type { BundleApi } from './api.js';

export class UnlabelledObjects {
  private readonly done = new Set<string>();

  /** Labels what the kind holds in the namespace for Bundles, unless this identity already did since start. */
  async labelOnce(api: BundleApi, identity: string, namespace: string, rt: ResourceType, log: Logger): Promise<void> {
    const key = `${identity}|${namespace}|${rt.group}/${rt.plural}`;
    if (this.done.has(key)) return;
    let items: KubeObject[];
    try {
      ({ items } = await api.list(rt, namespace, { metadataOnly: true }));
    } catch (err) {
      // The identity may not list the kind: its reads and writes will say so on the resources themselves.
      if (isForbidden(err)) return;
      throw err;
    }
    await this.label(api, namespace, rt, items, log);
    this.done.add(key);
  }

  /**
   * Labels those of `items` that reference a Bundle and lack the label (a
   * pass found one the caches cannot see: the label was taken off since).
   */
  async label(api: BundleApi, namespace: string, rt: ResourceType, items: readonly KubeObject[], log: Logger): Promise<void> {
    for (const o of items.filter(needsLabel)) {
      try {
        await api.patch(rt, namespace, o.metadata.name, labelPatch(o), 'json', { fieldManager: FIELD_MANAGER });
        log.info(
          { object: { kind: rt.kind, namespace: o.metadata.namespace, name: o.metadata.name } },
          'labelled an object a Bundle references so the caches see it',
        );
      } catch (err) {
        // Changed or gone since the list: its next write or event decides; refused: it stays unseen, as before.
        if (isStaleWrite(err) || isNotFound(err)) continue;
        if (isForbidden(err)) {
          log.warn(
            { object: { kind: rt.kind, namespace: o.metadata.namespace, name: o.metadata.name }, err: errorMessage(err) },
            'could not label an object a Bundle references: it is pruned only when its Bundle lists it again or is deleted',
          );
          continue;
        }
        throw err;
      }
    }
  }
}

function needsLabel(o: KubeObject): boolean {
  return o.metadata.labels?.[Labels.managed] !== 'true' && (o.metadata.ownerReferences ?? []).some(isBundleReference);
}

/** Guarded by uid and resourceVersion: the labels map is replaced whole, so it must be the one read. */
function labelPatch(o: KubeObject): unknown[] {
  return [
    { op: 'test', path: '/metadata/uid', value: o.metadata.uid },
    { op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion },
    { op: 'add', path: '/metadata/labels', value: { ...(o.metadata.labels ?? {}), [Labels.managed]: 'true' } },
  ];
}
