/**
 * The operator's writes taken off an object, as JSON patches: what the
 * operator wrote on it goes, the user's stays. The ways out, by what
 * happens next:
 *  - referencesPatch: the operator's references (the base of the others);
 *    letGoPatch adds the let-go mark (another Bundle takes it);
 *  - disownPatch: a background deletion, another owner left (the collector
 *    deletes it once that owner goes); the applied-hash goes too;
 *  - orphanPatch: an orphan deletion of its Bundle keeps it, and stops its
 *    countdown if it had one; the applied-hash goes too
 *    (referencesOnlyPatch: its references alone, while the traces wait);
 *  - keptReleasePatch: deletionPolicy Orphan; kept for good, labelled with
 *    the Bundle it left so that `bundlesmith pending` can show it;
 *  - releasePatch: released by a deleted Bundle with a countdown, signed so
 *    the released-object sweeper can tell it from a label anyone could write.
 * Pure.
 */
import type { DeletionDefaults } from '../../api/spec-defaults.js';
import { Annotations, Labels } from '../../api/names.js';
import { decideSoftDelete } from '../softdelete/decide.js';
import { releaseFactsOf, type ReleasedMeta, type ReleaseSigner } from '../softdelete/provenance.js';
import { formerBundleLabelValue } from '../softdelete/former-bundle.js';
import type { StampSeal } from '../softdelete/stamp-seal.js';
import { countdownOf } from './countdown.js';
import { type CountdownRecord } from './countdown-record.js';
import { isGated, readDeletionRules, stricterRules, type DeletionRules } from '../softdelete/rules.js';
import { jsonPointerSegment, type JsonPatchOperation, type LiveObject } from './objects.js';
import { partOfRemoval } from './applyset.js';
import { claimRecordOps, claimsStillOn, userReferences, type ReferenceOwnerContext } from './owner-references.js';

const annotationPath = (name: string): string => `/metadata/annotations/${jsonPointerSegment(name)}`;

/**
 * The ownerReferences left to an object the operator gives up, with a test
 * on the list as read (a concurrent change, such as the collector's, fails
 * the patch and the next pass decides again), and the bookkeeping
 * annotation and the ApplySet part-of label removed.
 */
export function referencesPatch(o: LiveObject, refs: ReferenceOwnerContext): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  if (o.metadata.ownerReferences === undefined) {
    // Nothing to replace; the resourceVersion guards the rest of the patch.
    if (o.metadata.resourceVersion !== undefined)
      ops.push({ op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion });
  } else {
    const kept = userReferences(o.metadata, refs);
    ops.push({ op: 'test', path: '/metadata/ownerReferences', value: o.metadata.ownerReferences });
    ops.push({ op: 'replace', path: '/metadata/ownerReferences', value: kept });
    // Let go, it is no longer a member of the Bundle's ApplySet (applyset.ts partOfRemoval), under the same test.
    ops.push(
      ...partOfRemoval(
        o,
        o.metadata.ownerReferences.filter((ref) => !kept.includes(ref)),
      ),
    );
  }
  if (o.metadata.annotations?.[Annotations.dependencyReferences] !== undefined)
    ops.push({ op: 'remove', path: annotationPath(Annotations.dependencyReferences) });
  ops.push(...claimRecordOps(o, claimsStillOn(o, o.metadata.ownerReferences === undefined ? [] : userReferences(o.metadata, refs))));
  return ops;
}

/**
 * Let go for another live Bundle that lists the object to take: the bare
 * hand-over, and the former-bundle annotation (not the label: nothing
 * sweeps it) saying which Bundle let it go. Until the taker's claim removes
 * it, the annotation tells an object let go from one the garbage collector
 * orphaned (effectivePropagation): a taker deleted before it took the
 * object is not read as an orphan deletion (fuzz seed 19412).
 */
export function letGoPatch(o: LiveObject, bundleName: string, refs: ReferenceOwnerContext): JsonPatchOperation[] {
  const ops = referencesPatch(o, refs);
  if (o.metadata.annotations === undefined) ops.push({ op: 'add', path: '/metadata/annotations', value: {} });
  ops.push({ op: 'add', path: annotationPath(Annotations.formerBundle), value: bundleName });
  return ops;
}

/**
 * Only the operator's ownerReferences out (and the claim record kept in
 * line with them), under a test of the references read: what an orphan
 * step sends while the orphan traces wait (FinalizePlan.traceStepsFrom),
 * so that nothing cascades through the operator's references meanwhile and
 * the marks that tell the orphan deletion stay. Undefined when the object
 * carries none of the operator's references.
 */
export function referencesOnlyPatch(o: LiveObject, refs: ReferenceOwnerContext): JsonPatchOperation[] | undefined {
  const current = o.metadata.ownerReferences;
  if (current === undefined) return undefined;
  const kept = userReferences(o.metadata, refs);
  if (kept.length === current.length) return undefined;
  return [
    { op: 'test', path: '/metadata/ownerReferences', value: current },
    { op: 'replace', path: '/metadata/ownerReferences', value: kept },
    ...claimRecordOps(o, claimsStillOn(o, kept)),
  ];
}

/**
 * Disown (a background deletion, an object with another owner): the
 * operator's references go, and its applied-hash, which would otherwise be
 * an orphan trace for a Bundle that lists the object later (see orphanPatch).
 */
export function disownPatch(o: LiveObject, refs: ReferenceOwnerContext): JsonPatchOperation[] {
  const ops = referencesPatch(o, refs);
  if (o.metadata.annotations?.[Annotations.appliedHash] !== undefined)
    ops.push({ op: 'remove', path: annotationPath(Annotations.appliedHash) });
  return ops;
}

/**
 * Orphan: the operator's references and annotation go, and so does a
 * countdown (its stamp, and an approval given for it): orphaning keeps every
 * object, so one that was counting down stops (nothing would sweep it: it
 * carries no former-bundle label). The applied-hash goes too: left on, it
 * would be an orphan trace for a Bundle that lists the object later and is
 * deleted before it adopted it (red team 24: a Bundle re-created under the
 * name, or the new Bundle objects were moved to).
 */
export function orphanPatch(o: LiveObject, refs: ReferenceOwnerContext): JsonPatchOperation[] {
  const ops = referencesPatch(o, refs);
  for (const name of [Annotations.deletionTimestamp, Annotations.stampProof, Annotations.deletionApproved, Annotations.appliedHash]) {
    if (o.metadata.annotations?.[name] !== undefined) ops.push({ op: 'remove', path: annotationPath(name) });
  }
  return ops;
}

/**
 * Marks the object released by `bundleName`: the label (a value that fits),
 * the annotation (the whole name). Creates the labels and annotations maps
 * when the object has none, so it comes before any other annotation op.
 */
function markFormerBundle(o: LiveObject, bundleName: string): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  if (o.metadata.labels === undefined) ops.push({ op: 'add', path: '/metadata/labels', value: {} });
  ops.push({ op: 'add', path: `/metadata/labels/${jsonPointerSegment(Labels.formerBundle)}`, value: formerBundleLabelValue(bundleName) });
  if (o.metadata.annotations === undefined) ops.push({ op: 'add', path: '/metadata/annotations', value: {} });
  ops.push({ op: 'add', path: annotationPath(Annotations.formerBundle), value: bundleName });
  return ops;
}

/**
 * deletionPolicy Orphan: the operator's references go, and so does any
 * countdown (stamp, approval, proof: nothing will delete it); the
 * former-bundle label says where it came from. The policy is written onto
 * the object when it came from the Bundle's defaults, so that the object
 * itself says it is kept: the sweeper and `bundlesmith pending` read only
 * the object, and the sweeper keeps an Orphan object whatever else it
 * carries.
 */
export function keptReleasePatch(o: LiveObject, bundleName: string, refs: ReferenceOwnerContext): JsonPatchOperation[] {
  const ops = [...referencesPatch(o, refs), ...markFormerBundle(o, bundleName)];
  const annotations = o.metadata.annotations;
  for (const name of [Annotations.deletionTimestamp, Annotations.stampProof, Annotations.deletionApproved, Annotations.releaseProof]) {
    if (annotations?.[name] !== undefined) ops.push({ op: 'remove', path: annotationPath(name) });
  }
  if (annotations?.[Annotations.deletionPolicy] !== 'Orphan')
    ops.push({ op: 'add', path: annotationPath(Annotations.deletionPolicy), value: 'Orphan' });
  return ops;
}

/**
 * Release with a countdown: the operator's references go, the former-bundle
 * label names the Bundle, the countdown starts unless it has, and the
 * release is signed over the object's uid, namespace, Bundle, stamp, delay
 * and policy (the sweeper deletes nothing whose proof does not check). The
 * Bundle's defaults go with the Bundle, so a delay or policy the object
 * takes from them is written onto it, and so are rules stricter than its
 * own (`floor`, and what its proven stamp seals): the release carries the
 * strictest reading, since the sweeper will read only the object. A gate
 * without a delay counts down from zero.
 */
export function releasePatch(
  o: LiveObject,
  bundle: { name: string; defaults?: DeletionDefaults | undefined },
  refs: ReferenceOwnerContext,
  countdown: { now: number; stampAt: number },
  sign: ReleaseSigner,
  read: { seal?: StampSeal | undefined; floor?: DeletionRules | undefined; record?: CountdownRecord | undefined } = {},
): JsonPatchOperation[] {
  // markFormerBundle creates the annotations map when there is none.
  const ops = [...referencesPatch(o, refs), ...markFormerBundle(o, bundle.name)];
  // Only a stamp this operator wrote is signed into the release: one written by hand starts over from now.
  const proven = countdownOf(o, { seal: read.seal, defaults: bundle.defaults, extra: read.floor, record: read.record });
  const annotations = { ...(proven.annotations ?? {}) };
  const reading = readDeletionRules(annotations, bundle.defaults);
  if (reading.ok) {
    const rules = stricterRules(reading.rules, proven.floor);
    const delay = rules.delayText ?? (isGated(rules) ? '0s' : undefined);
    if (delay !== undefined && annotations[Annotations.deletionDelay] !== delay) {
      annotations[Annotations.deletionDelay] = delay;
      ops.push({ op: 'add', path: annotationPath(Annotations.deletionDelay), value: delay });
    }
    const ownPolicy = annotations[Annotations.deletionPolicy];
    if (rules.policyFromDefaults || (ownPolicy ?? 'Delete') !== rules.policy) {
      annotations[Annotations.deletionPolicy] = rules.policy;
      ops.push({ op: 'add', path: annotationPath(Annotations.deletionPolicy), value: rules.policy });
    }
  }
  const decision = decideSoftDelete({ inSpec: false, annotations, now: countdown.now, stampAt: countdown.stampAt });
  // The first test already guards the whole patch; the stamp needs no second one.
  if (decision.action === 'mark') {
    const approvalPath = annotationPath(Annotations.deletionApproved);
    ops.push(...markPatch(o, decision.deletionTimestamp).filter((op) => op.op !== 'test' && op.path !== approvalPath));
    // Without markPatch's resourceVersion test, an approval written after the read (for the stamp this replaces) would
    // survive a conditional remove: added and removed, it is gone whatever is there when the patch lands (red team 35).
    ops.push({ op: 'add', path: approvalPath, value: '' }, { op: 'remove', path: approvalPath });
  }
  // The stamp signed is stated even where it is already there: the record of the signing is read off the patch
  // (core/softdelete/release-record.ts signedStampOf), and what lands on the object is what the proof is over.
  else if (annotations[Annotations.deletionTimestamp] !== undefined)
    ops.push({ op: 'add', path: annotationPath(Annotations.deletionTimestamp), value: annotations[Annotations.deletionTimestamp] });
  const proof = sign({
    uid: o.metadata.uid ?? '',
    namespace: o.metadata.namespace ?? '',
    formerBundle: bundle.name,
    deletionTimestamp: decision.action === 'mark' ? decision.deletionTimestamp : (annotations[Annotations.deletionTimestamp] ?? ''),
    deletionDelay: annotations[Annotations.deletionDelay] ?? '',
    deletionPolicy: annotations[Annotations.deletionPolicy] ?? '',
  });
  ops.push({ op: 'add', path: annotationPath(Annotations.releaseProof), value: proof });
  return ops;
}

/**
 * JSON patch writing the countdown stamp (the object has annotations: it
 * carries deletionDelay, or there would be no countdown). A test on the object's
 * resourceVersion keeps the stamp from landing on an object that changed
 * since it was read (the next pass re-reads and re-decides). An approval on
 * the object goes: it was given for an earlier countdown.
 */
export function markPatch(
  o: { metadata: { resourceVersion?: string | undefined; annotations?: Readonly<Record<string, string>> | undefined } },
  deletionTimestamp: string,
  proof?: string,
): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  if (o.metadata.resourceVersion !== undefined)
    ops.push({ op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion });
  // 'add' replaces a stamp already there (one not proven is read as none, and started again).
  ops.push({ op: 'add', path: annotationPath(Annotations.deletionTimestamp), value: deletionTimestamp });
  if (proof !== undefined) ops.push({ op: 'add', path: annotationPath(Annotations.stampProof), value: proof });
  else if (o.metadata.annotations?.[Annotations.stampProof] !== undefined)
    ops.push({ op: 'remove', path: annotationPath(Annotations.stampProof) });
  // A new countdown: an approval there was given for an earlier one (a cancelled countdown's, one dated ahead within the
  // clock skew allowed included) and must never count for this one (red team 34).
  if (o.metadata.annotations?.[Annotations.deletionApproved] !== undefined)
    ops.push({ op: 'remove', path: annotationPath(Annotations.deletionApproved) });
  return ops;
}

type ReleasedObject = { metadata: ReleasedMeta & { resourceVersion?: string | undefined } };

/** The release proof signed again over the facts the object states, with `deletionTimestamp` as its stamp ('' for none). */
function resignedReleaseProof(o: ReleasedObject, deletionTimestamp: string, sign: ReleaseSigner): JsonPatchOperation | undefined {
  const facts = releaseFactsOf(o.metadata);
  if (facts === undefined) return undefined;
  return { op: 'add', path: annotationPath(Annotations.releaseProof), value: sign({ ...facts, deletionTimestamp }) };
}

/**
 * The sweep cancels a released countdown (a live Bundle lists the object at
 * a version it cannot take hold at, core/softdelete/sweep.ts): the stamp and
 * any approval go, the object stays released, and the release is signed
 * again over no stamp, so that the countdown the sweep starts when the
 * object is dropped is a proven one. Only for an object whose proof checked
 * as read: the resourceVersion test keeps the new proof off any other state.
 */
export function cancelReleasedCountdownPatch(o: ReleasedObject, sign: ReleaseSigner): JsonPatchOperation[] | undefined {
  const proof = resignedReleaseProof(o, '', sign);
  if (proof === undefined || o.metadata.resourceVersion === undefined) return undefined;
  const ops: JsonPatchOperation[] = [{ op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion }];
  for (const name of [Annotations.deletionTimestamp, Annotations.stampProof, Annotations.deletionApproved]) {
    if (o.metadata.annotations?.[name] !== undefined) ops.push({ op: 'remove', path: annotationPath(name) });
  }
  ops.push(proof);
  return ops;
}

/**
 * A released object without a stamp (its countdown was cancelled while a
 * Bundle listed it) starts a new countdown when no Bundle lists it: the
 * stamp, and the release signed again over it. Only for an object whose
 * proof checked as read (markPatch's resourceVersion test).
 */
export function restampReleasePatch(o: ReleasedObject, deletionTimestamp: string, sign: ReleaseSigner): JsonPatchOperation[] {
  const proof = resignedReleaseProof(o, deletionTimestamp, sign);
  return [...markPatch(o, deletionTimestamp), ...(proof ? [proof] : [])];
}

/**
 * A release an earlier version signed (a v2 or v1 proof) signed again as it
 * stands, as a v3 one (over the same facts: stamp, delay and policy
 * unchanged), so that from then on it counts only with its record, and a
 * take-hold ends it even where its marks were taken off first (red team
 * 32). Only for an object whose proof checked as read:
 * the resourceVersion test keeps the new proof off any other state.
 */
export function recordedReleasePatch(o: ReleasedObject, sign: ReleaseSigner): JsonPatchOperation[] | undefined {
  const proof = resignedReleaseProof(o, o.metadata.annotations?.[Annotations.deletionTimestamp] ?? '', sign);
  if (proof === undefined || o.metadata.resourceVersion === undefined) return undefined;
  return [{ op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion }, proof];
}
