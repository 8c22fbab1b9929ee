/**
 * The released-object sweep's check of release proofs
 * (core/softdelete/provenance.ts), with the report of what it keeps: an
 * object labelled by hand (or released before releases were signed) is
 * never swept, and is reported once per uid and resourceVersion, as a
 * Warning event on the object and a log line.
 */
import { EventReasons } from '../../api/names.js';
import { checkReleaseProof, releaseSigner, type ReleaseSigner } from '../../core/softdelete/provenance.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';
import type { ControllerDeps } from '../deps.js';
import { SeenKeys } from '../../runtime/seen-keys.js';
import { ReleaseRecordRefused } from './release-record-refused.js';

export class ReleaseProofs {
  /** uid@resourceVersion of the unproven releases reported already. */
  private readonly reportedUnproven = new SeenKeys();
  /** uid@message of the refused record writes reported already. */
  private readonly reportedRefusals = new SeenKeys();
  /** Signs a release again where the sweep changes its stamp (a cancelled or a new countdown). */
  readonly sign: ReleaseSigner;

  constructor(private readonly o: Pick<ControllerDeps, 'releaseKey' | 'logger' | 'events'>) {
    this.sign = releaseSigner(o.releaseKey);
  }

  /** Whether the object's release proof checks against the operator's key; reported once when it does not. */
  async proven(rt: ResourceType, o: KubeObject): Promise<boolean> {
    const check = checkReleaseProof(this.o.releaseKey, o.metadata);
    if (check.proven) return true;
    await this.reportKept(rt, o, check.reason);
    return false;
  }

  /**
   * The object carries a release that is not the recorded one
   * (release-records.ts), or one signed with a record that is gone: kept,
   * reported once.
   */
  async notCurrent(rt: ResourceType, o: KubeObject, recordMissing = false): Promise<'forget'> {
    const reason = recordMissing
      ? 'its release was signed with a release record, and that record is gone (deleted by hand?): `bundlesmith delete-now` deletes it'
      : "its release is not the operator's latest release of it (an earlier release written back, or one a Bundle's take-hold ended)";
    await this.reportKept(rt, o, reason);
    return 'forget';
  }

  /**
   * The object's release record may not be written: a listing's cancel, a
   * new countdown or a signing waits for it (the sweep tries again, and
   * keeps the object meanwhile). Reported once per object and message; any
   * other failure of a sweep is not reported here.
   */
  async recordRefused(refused: unknown): Promise<void> {
    if (!(refused instanceof ReleaseRecordRefused)) return;
    const { uid, apiVersion, kind, namespace, name } = refused.object;
    if (!this.reportedRefusals.first(`${uid}@${refused.refusal}`)) return;
    const message = `kept while its release record (ConfigMap ${refused.record}) may not be written: ${refused.refusal}`;
    await this.o.events.warning({ apiVersion, kind, name, namespace, uid }, EventReasons.ReleaseRecordRefused, message);
  }

  /** Reports a kept object once per uid and resourceVersion: a log line and a Warning event on the object. */
  private async reportKept(rt: ResourceType, o: KubeObject, reason: string): Promise<void> {
    const seen = `${o.metadata.uid ?? ''}@${o.metadata.resourceVersion ?? ''}`;
    if (!this.reportedUnproven.first(seen)) return;
    const namespace = o.metadata.namespace ?? '';
    this.o.logger.warn(
      { object: { kind: rt.kind, namespace, name: o.metadata.name }, reason },
      'released-object sweep: kept an object whose release is not proven',
    );
    const target = { apiVersion: rt.apiVersion, kind: rt.kind, name: o.metadata.name, namespace, uid: o.metadata.uid };
    await this.o.events.warning(target, EventReasons.UnprovenRelease, `kept, never deleted by the sweep: ${reason}`);
  }
}
