/**
 * Where the latest signing of each release is recorded
 * (core/softdelete/release-record.ts): one ConfigMap per released object,
 * `<release key Secret>-<object uid>`, beside the release key in the
 * operator's own namespace, where Bundle authors have no right. A signing is
 * recorded before the patch carrying it is sent: a patch that then fails
 * leaves a record the object does not match, which the sweeper reads as no
 * countdown (it starts a new one), never as an earlier end. The sweeper
 * drops the record once it has deleted the object.
 */
import { Annotations, FIELD_MANAGER, ReleaseRecordLabel } from '../../api/names.js';
import { checkReleaseProof, type ReleasedMeta } from '../../core/softdelete/provenance.js';
import { SeenKeys } from '../../runtime/seen-keys.js';
import { recordedStampOf, signedStampOf } from '../../core/softdelete/release-record.js';
import type { JsonPatchOperation } from '../../core/bundle/objects.js';
import type { KubeClient } from '../../kube/client.js';
import { errorMessage, isAlreadyExists } from '../../kube/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { ResourceType } from '../../kube/types.js';
import type { Discovery } from '../../kube/discovery.js';
import { groupOf } from '../../core/bundle/objects.js';
import type { ReleaseKeySecret } from './release-key.js';

/** How often the records of objects that are gone are looked for. */
const PRUNE_EVERY_MS = 10 * 60_000;

const CONFIGMAP_RESOURCE: ResourceType = {
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
  verbs: ['get', 'list', 'create', 'patch', 'delete'],
};

/** The released object a record is about (named in the record, for a person reading it). */
export interface RecordedObject {
  uid: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

export class ReleaseRecords {
  private lastPrune: number | undefined;
  /** uid@stamp of the listing cancels recorded already (recordListingCancel). */
  private readonly recordedCancels = new SeenKeys();

  constructor(
    private readonly client: KubeClient,
    private readonly at: ReleaseKeySecret,
  ) {}

  private nameFor(uid: string): string {
    return `${this.at.name}-${uid}`;
  }

  /** Records the signing a patch carries, if it carries one; call before sending the patch (a failure throws: do not send). */
  async recordSigning(object: RecordedObject, patch: readonly JsonPatchOperation[]): Promise<void> {
    const stamp = signedStampOf(patch);
    if (stamp !== undefined) await this.record(object, stamp);
  }

  /** Records `stamp` ('' for none: a cancelled countdown) as the latest signing of the object's release. */
  async record(object: RecordedObject, stamp: string): Promise<void> {
    const data = { stamp, uid: object.uid, object: `${object.apiVersion} ${object.kind} ${object.namespace}/${object.name}` };
    try {
      await this.client.create(CONFIGMAP_RESOURCE, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: this.nameFor(object.uid),
          namespace: this.at.namespace,
          labels: { 'app.kubernetes.io/name': 'bundlesmith', [ReleaseRecordLabel.key]: ReleaseRecordLabel.value },
        },
        data,
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      await this.client.patch(CONFIGMAP_RESOURCE, this.at.namespace, this.nameFor(object.uid), { data }, 'merge', {
        fieldManager: FIELD_MANAGER,
      });
    }
  }

  /**
   * A live Bundle lists the object: the countdown on it now is cancelled,
   * whatever becomes of the write that says so on the object (the
   * take-hold, the sweep's cancel: an admission policy or RBAC may refuse
   * both, red team 27). Recorded as no stamp, once per countdown, so that
   * the stamp left on the object never counts again, after a restart too.
   * Only for a release this operator signed (`releaseKey`): a record would
   * otherwise vouch for nothing.
   */
  async recordListingCancel(
    o: { apiVersion: string; kind: string; metadata: ReleasedMeta & { name: string } },
    releaseKey: Uint8Array,
  ): Promise<void> {
    const { uid, namespace = '', name } = o.metadata;
    const stamp = o.metadata.annotations?.[Annotations.deletionTimestamp];
    if (uid === undefined || stamp === undefined || this.recordedCancels.has(`${uid}@${stamp}`)) return;
    if (!checkReleaseProof(releaseKey, o.metadata).proven) return;
    await this.record({ uid, apiVersion: o.apiVersion, kind: o.kind, namespace, name }, '');
    this.recordedCancels.add(`${uid}@${stamp}`);
  }

  /**
   * The recorded stamp, read fresh: undefined when there is no record (a
   * release signed before releases were recorded); '' for no stamp, and
   * for a record without a readable stamp (the strictest reading).
   */
  async read(uid: string): Promise<string | undefined> {
    const found = await this.client.tryGet(CONFIGMAP_RESOURCE, this.at.namespace, this.nameFor(uid));
    return found === undefined ? undefined : recordedStampOf((found as { data?: unknown }).data);
  }

  /** forget, for an object the sweep saw gone or deleted: a failure is logged (it leaves a record of a uid that cannot come back). */
  async forgetGone(uid: string, logger: Pick<Logger, 'warn'>): Promise<'forget'> {
    try {
      await this.forget(uid);
    } catch (err) {
      logger.warn({ uid, err: errorMessage(err) }, 'dropping the release record of a deleted object failed');
    }
    return 'forget';
  }

  /** Drops the record of an object that is gone (the record's own uid as the precondition). */
  async forget(uid: string): Promise<void> {
    const found = await this.client.tryGet(CONFIGMAP_RESOURCE, this.at.namespace, this.nameFor(uid));
    const recordUid = found?.metadata.uid;
    if (recordUid === undefined) return;
    await this.client.delete(CONFIGMAP_RESOURCE, this.at.namespace, this.nameFor(uid), { uid: recordUid });
  }

  /**
   * Drops the records of objects that are gone, at most every ten minutes
   * (`now`: the caller's clock): an object the Bundle prune or a person
   * deleted leaves its record behind, the sweep drops only what it deletes.
   * A record is dropped only when its object's kind is served now (by group
   * and kind) and a read shows no object of its uid: a uid never comes back,
   * so the record can never be needed again. Any doubt keeps it.
   */
  async pruneGone(
    now: number,
    resolve: Pick<Discovery, 'resolveGroupKind'>,
    logger: Pick<Logger, 'warn'>,
    onlyNamespace?: string,
  ): Promise<void> {
    if (this.lastPrune !== undefined && now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    const prefix = `${this.at.name}-`;
    const { items } = await this.client.list(CONFIGMAP_RESOURCE, this.at.namespace, {
      labelSelector: `${ReleaseRecordLabel.key}=${ReleaseRecordLabel.value}`,
    });
    for (const record of items) {
      const recordUid = record.metadata.uid;
      const named = parseRecordedObject((record as { data?: unknown }).data);
      if (!record.metadata.name.startsWith(prefix) || named === undefined || recordUid === undefined) continue;
      // An operator watching one namespace leaves the others' records to theirs.
      if (onlyNamespace !== undefined && named.namespace !== onlyNamespace) continue;
      const uid = record.metadata.name.slice(prefix.length);
      try {
        const kind = await resolve.resolveGroupKind(groupOf(named.apiVersion), named.kind);
        if (kind.state !== 'served') continue;
        const live = await this.client.tryGet(kind.type, named.namespace, named.name, { metadataOnly: true });
        if (live !== undefined && live.metadata.uid === uid) continue;
        // Pinned to the record as listed: one written again since (a new signing) stays.
        await this.client.delete(CONFIGMAP_RESOURCE, this.at.namespace, record.metadata.name, {
          uid: recordUid,
          ...(record.metadata.resourceVersion ? { resourceVersion: record.metadata.resourceVersion } : {}),
        });
      } catch (err) {
        logger.warn({ record: record.metadata.name, err: errorMessage(err) }, 'pruning a release record failed; kept');
      }
    }
  }
}

/** The object a record names (`data.object`: "apiVersion kind namespace/name"). */
function parseRecordedObject(data: unknown): { apiVersion: string; kind: string; namespace: string; name: string } | undefined {
  const text = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).object : undefined;
  if (typeof text !== 'string') return undefined;
  const [apiVersion, kind, at, ...rest] = text.split(' ');
  const [namespace, name, ...more] = (at ?? '').split('/');
  if (apiVersion === undefined || kind === undefined || namespace === undefined || name === undefined) return undefined;
  if (rest.length > 0 || more.length > 0 || name === '') return undefined;
  return { apiVersion, kind, namespace, name };
}
