/**
 * Where the latest signing of each release is recorded (core/softdelete/release-record.ts): one ConfigMap per released
 * object, `<release key Secret>-<object uid>`, beside the release key in the operator's own namespace, where Bundle
 * authors have no right. A signing is recorded before the patch carrying it is sent: a patch that then fails leaves a
 * record the object does not match, and the sweeper keeps such an object (reported), never ends it early. The sweeper
 * drops the record once it has deleted the object, and pruneGone once the object is gone.
 */
import { FIELD_MANAGER, Labels, ReleaseRecordLabel } from '../../api/names.js';
import { type ReleasedMeta } from '../../core/softdelete/provenance.js';
import {
  asItStandsRecord,
  cancelledByListing,
  countsUnwritten,
  carriesRecordedRelease,
  carriesReleaseMarks,
  parseRecordedObject,
  recordedObject,
  type RecordDecision,
  type RecordedObject,
  parseReleaseRecord,
  signedProofOf,
  type ReleaseRecord,
} from '../../core/softdelete/release-record.js';
import type { JsonPatchOperation } from '../../core/bundle/objects.js';
import type { KubeClient } from '../../kube/client.js';
import { errorMessage, isAlreadyExists, isConflict, isForbidden, isInvalid, KubeApiError, SendRefused } from '../../kube/errors.js';
import { ReleaseRecordRefused } from './release-record-refused.js';
import type { Logger } from '../../observability/logger.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { Discovery } from '../../kube/discovery.js';
import { groupOf } from '../../core/bundle/objects.js';
import type { ReleaseKeySecret } from './release-key.js';
import { UnwrittenRecords, type UnreadDecisionKind } from './unwritten-records.js';

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

export class ReleaseRecords {
  private lastPrune: number | undefined;
  /** The cancels and ends decided and not written (or decided unread): they count in this process all the same. */
  private readonly unwritten = new UnwrittenRecords();

  /** `at`: the release key's Secret, beside which the records are kept. */
  constructor(
    private readonly client: KubeClient,
    private readonly at: ReleaseKeySecret,
  ) {}

  private nameFor(uid: string): string {
    return `${this.at.name}-${uid}`;
  }

  /**
   * Records the signing a patch carries, if it carries one; call before
   * sending the patch (a failure throws: do not send). `resigning`: the
   * sweep signs again the release the object carries (a cancel, a new
   * countdown), which is recorded only while the record names that release
   * (carriesRecordedRelease); false comes back otherwise: do not send.
   */
  async recordSigning(object: RecordedObject, patch: readonly JsonPatchOperation[], resigning?: ReleasedMeta): Promise<boolean> {
    const proof = signedProofOf(patch);
    if (proof === undefined) return true;
    const signed: ReleaseRecord = { state: 'signed', proof };
    return this.write(
      object,
      resigning === undefined ? signed : (current) => (carriesRecordedRelease(resigning, current) ? signed : undefined),
    );
  }

  /**
   * Records the signing a patch carries where the sweep signs an earlier
   * version's release (`carried`) again as it stands (asItStandsRecord);
   * true where the patch may be sent (recorded now, or by an earlier try),
   * false where the record decides otherwise. Call before sending the patch.
   */
  async recordSigningAsItStands(object: RecordedObject, patch: readonly JsonPatchOperation[], carried: string): Promise<boolean> {
    const proof = signedProofOf(patch);
    if (proof === undefined) return false;
    let recordedBefore = false;
    const wrote = await this.write(object, (current) => {
      const step = asItStandsRecord(current, carried, proof);
      recordedBefore = step === 'recorded';
      return step === 'write' ? { state: 'signed', proof } : undefined;
    });
    return wrote || recordedBefore;
  }

  /** A Bundle takes hold of the object (before the take-hold is sent): no release of it counts any more. */
  async end(object: RecordedObject): Promise<void> {
    // Decided on the record read (not upserted blind): one that cannot be written counts all the same (write).
    await this.write(object, () => ({ state: 'ended', proof: '' }), 'end');
  }

  /**
   * The release recorded for the object, if any, has ended: written back
   * later, it counts no more. Writes nothing where there is no record (a
   * take-hold of an object showing no release's marks: they may have been
   * taken off first, red team 30).
   */
  async endIfRecorded(object: RecordedObject): Promise<void> {
    await this.write(
      object,
      (current) => (current === undefined || current.state === 'ended' ? undefined : { state: 'ended', proof: '' }),
      'end-if-recorded',
    );
  }

  /**
   * The object is there without the former-bundle label (a released object
   * always carries it): its release ended, whoever took the label off
   * (`bundlesmith cancel`, a take-hold, a person; red teams 29 and 30).
   */
  async endIfUnlabelled(object: RecordedObject, meta: { labels?: Readonly<Record<string, string>> | undefined }): Promise<void> {
    if (meta.labels?.[Labels.formerBundle] === undefined) await this.endIfRecorded(object);
  }

  /** An object left the sweep's label-selected watch: read fresh, still there without the label, its release has ended. Never throws. */
  async endIfLeft(rt: ResourceType, left: KubeObject, logger: Pick<Logger, 'warn'>): Promise<void> {
    const { namespace = '', name, uid } = left.metadata;
    try {
      const fresh = await this.client.tryGet(rt, namespace, name, { metadataOnly: true });
      if (fresh === undefined || uid === undefined || fresh.metadata.uid !== uid) return;
      if (fresh.metadata.labels?.[Labels.formerBundle] !== undefined) return;
      // Its release ended, recorded where there was no record yet too (an earlier version's, not signed again yet, its
      // proof checking or not, or taken off): written back later, it counts no more (red teams 35 and 39).
      await this.end(recordedObject(rt, { uid, namespace, name }));
    } catch (err) {
      logger.warn({ kind: rt.kind, namespace, name, err: errorMessage(err) }, 'recording the end of a release failed');
    }
  }

  /**
   * A live Bundle lists the object: the countdown on it now is cancelled,
   * whatever becomes of the write that says so on the object (the
   * take-hold, the sweep's cancel: an admission policy or RBAC may refuse
   * both, red team 27), after a restart too (cancelledByListing). Decided on
   * the record read fresh every time, never on what the object showed
   * before: an earlier release written back shows a proof and stamp a
   * listing cancelled already, while the record names a later signing (red
   * team 37). A read per call while a listed object shows a release's marks
   * (until the take-hold lands). Without a record, one is written all the
   * same (cancelledByListing: cancelled under an earlier version's proof,
   * ended for anything else).
   */
  async recordListingCancel(o: { apiVersion: string; kind: string; metadata: ReleasedMeta & { name: string } }): Promise<void> {
    const { uid, namespace = '', name } = o.metadata;
    // Any release's marks, its stamp or its proof taken off too: the recorded signing is cancelled whatever the object
    // shows (red teams 30 and 32); without a record, the release an earlier version signed (cancelledByListing).
    if (uid === undefined || !carriesReleaseMarks(o.metadata)) return;
    await this.write(recordedObject(o, { uid, namespace, name }), (current) => cancelledByListing(o.metadata, current), 'listing-cancel');
  }

  /**
   * recordListingCancel for a listed object read as the operator: the
   * Bundle's identity may not read it (a 403), or lists it at a version no
   * longer served. A listing cancels all the same; the sweep may not watch
   * the kind yet (red team 40).
   */
  async recordListingCancelAt(rt: ResourceType, namespace: string, name: string): Promise<void> {
    const live = await this.client.tryGet(rt, namespace, name, { metadataOnly: true });
    if (live !== undefined) await this.recordListingCancel({ ...live, apiVersion: rt.apiVersion, kind: rt.kind });
  }

  /** The record of the object's release, read fresh: undefined when there is none (a release signed before records). */
  async read(uid: string): Promise<ReleaseRecord | undefined> {
    // A cancel or an end not written yet is tried again (written, it holds after a restart too); a failure leaves it
    // counting in this process only, and it is tried again at the next read or write.
    await this.writeUnwritten(uid).catch(() => false);
    const found = await this.client.tryGet(CONFIGMAP_RESOURCE, this.at.namespace, this.nameFor(uid));
    return this.unwritten.decidedOn(uid, found === undefined ? undefined : parseReleaseRecord((found as { data?: unknown }).data));
  }

  /** Writes the cancel or end this process holds for the object, if any (write: decided on nothing else). */
  private async writeUnwritten(uid: string): Promise<void> {
    const object = this.unwritten.objectFor(uid);
    if (object !== undefined) await this.write(object, () => undefined);
  }

  /**
   * Writes the record: `next` as it is, or decided on the record read fresh
   * (undefined: leave it; false comes back), then written only over the
   * record as read (its resourceVersion), decided again when it changed.
   * `unread`: a cancel or an end, held when the record cannot be read
   * (UnwrittenRecords.holdUnread) and decided on it once it is.
   */
  private async write(object: RecordedObject, next: ReleaseRecord | RecordDecision, unread?: UnreadDecisionKind): Promise<boolean> {
    const name = this.nameFor(object.uid);
    for (let attempt = 0; ; attempt++) {
      // A signing written as it is reads the record too where decisions are held unread: decided before it, they end or
      // cancel the release before it and are superseded by it, not applied to it later (which would keep it for good).
      const reads = typeof next === 'function' || this.unwritten.holdsUnread(object.uid);
      let found: KubeObject | undefined;
      try {
        found = reads ? await this.client.tryGet(CONFIGMAP_RESOURCE, this.at.namespace, name) : undefined;
      } catch (err) {
        // Refused or failed: a cancel or an end counts all the same, decided on the record once it can be read (red team 40).
        if (typeof next === 'function' && unread !== undefined) this.unwritten.holdUnread(object, unread, next);
        throw err;
      }
      const current = found && parseReleaseRecord((found as { data?: unknown }).data);
      const decidedOn = reads ? this.unwritten.decidedOn(object.uid, current) : undefined;
      const decided = typeof next === 'function' ? next(decidedOn) : next;
      // Decided on a cancel or an end only this process knows (its write failed): written first, whatever this write
      // decides, so that nothing goes on (a take-hold sent, a record pruned) while the server's record says otherwise.
      const record = decided ?? (typeof next === 'function' ? this.unwritten.unwrittenFor(object.uid)?.to : undefined);
      if (record === undefined) return false;
      const data = { ...record, uid: object.uid, object: `${object.apiVersion} ${object.kind} ${object.namespace}/${object.name}` };
      try {
        if (typeof next === 'function' && found === undefined) await this.create(name, data);
        else if (typeof next === 'function') {
          const pinned = { metadata: { resourceVersion: found?.metadata.resourceVersion }, data };
          await this.client.patch(CONFIGMAP_RESOURCE, this.at.namespace, name, pinned, 'merge', { fieldManager: FIELD_MANAGER });
        } else await this.upsert(name, data);
        // Decided on the record with any unwritten one: what is written now supersedes it.
        this.unwritten.written(object.uid);
        return decided !== undefined;
      } catch (err) {
        // Another writer got there first: decide again on what it wrote.
        if (attempt < 3 && (isConflict(err) || isAlreadyExists(err))) continue;
        // Not written (refused, failed): a cancel or an end counts in this process all the same, written at its next read.
        if (typeof next === 'function' && countsUnwritten(record)) this.unwritten.holdUnwritten(object, current, record);
        // Refused by RBAC: said so, naming the record, where the failure is reported on the object (a take-hold's resource
        // in the Bundle's status): the user's object is not what may not be written.
        if ((isForbidden(err) || isInvalid(err)) && err instanceof KubeApiError && !(err instanceof SendRefused))
          throw new ReleaseRecordRefused(object, `${this.at.namespace}/${name}`, err);
        throw err;
      }
    }
  }

  private async create(name: string, data: Record<string, string>): Promise<void> {
    await this.client.create(CONFIGMAP_RESOURCE, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace: this.at.namespace,
        labels: { 'app.kubernetes.io/name': 'bundlesmith', [ReleaseRecordLabel.key]: ReleaseRecordLabel.value },
      },
      data,
    });
  }

  private async upsert(name: string, data: Record<string, string>): Promise<void> {
    try {
      await this.create(name, data);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      await this.client.patch(CONFIGMAP_RESOURCE, this.at.namespace, name, { data }, 'merge', { fieldManager: FIELD_MANAGER });
    }
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
    this.unwritten.forget(uid);
    const found = await this.client.tryGet(CONFIGMAP_RESOURCE, this.at.namespace, this.nameFor(uid));
    const recordUid = found?.metadata.uid;
    if (recordUid === undefined) return;
    await this.client.delete(CONFIGMAP_RESOURCE, this.at.namespace, this.nameFor(uid), { uid: recordUid });
  }

  /**
   * Writes every cancel or end held (a failure keeps it); never throws. Every process calls it (Operator), not only the
   * sweeping one: another shard's sweep learns a listing's cancel only from the record (red team 41).
   */
  async writeHeld(logger: Pick<Logger, 'warn'>): Promise<void> {
    for (const uid of this.unwritten.uids())
      await this.read(uid)
        .then(() => this.writeUnwritten(uid))
        .catch((err: unknown) => logger.warn({ uid, err: errorMessage(err) }, 'writing a release record failed; kept in memory'));
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
    resolve: Pick<Discovery, 'resolveGroupKind' | 'invalidate'>,
    logger: Pick<Logger, 'warn'>,
    onlyNamespace?: string,
  ): Promise<void> {
    await this.writeHeld(logger);
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
        let live = await this.client.tryGet(kind.type, named.namespace, named.name, { metadataOnly: true });
        if (live === undefined) {
          // A 404 may mean the version stopped being served since discovery last looked (a CRD upgrade), not that the
          // object is gone: read again at the version served after a fresh discovery, and keep the record on any change.
          resolve.invalidate();
          const again = await resolve.resolveGroupKind(groupOf(named.apiVersion), named.kind);
          if (again.state !== 'served' || again.type.apiVersion !== kind.type.apiVersion) continue;
          live = await this.client.tryGet(again.type, named.namespace, named.name, { metadataOnly: true });
        }
        if (live !== undefined && live.metadata.uid === uid) {
          // There, and no longer labelled released (`bundlesmith cancel`, a take-hold, while no sweep watched): it ended.
          await this.endIfUnlabelled({ ...named, uid }, live.metadata);
          continue;
        }
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
