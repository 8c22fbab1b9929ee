/**
 * What an object still carries of a Bundle being deleted, read once, for the
 * two decisions that rest on it: whether an orphan deletion happened
 * (isOrphanTrace: the garbage collector may have removed the orphan
 * finalizer before the finalizer's first pass) and what an orphan deletion
 * cleans (orphanCandidacy). Both read the same evidence, so a trace and a
 * candidate cannot come to disagree on what the operator wrote. Pure.
 */
import { Annotations, Labels } from '../../api/names.js';
import { isMemberOf } from './applyset.js';
import { controllerOf, objectKey, type LiveObject } from './objects.js';
import { recordNamesAny, recordedReferenceOnlyOperators, writtenByOperator } from './owner-references.js';
import type { FinalizeInput } from './finalize-types.js';

/**
 * The strongest mark of the Bundle on an uncontrolled object, whatever its
 * references. At the Bundle's coordinates, in order: its ApplySet
 * membership, its dependency record, its applied-hash, a countdown stamp.
 * Off them only what the operator wrote counts (its own managedFields
 * entry): a person's copy carries the labels and annotations too, and the
 * part-of label names the Bundle by name, so a predecessor of the same name
 * left it as well (red team 23).
 */
export type OrphanEvidence =
  | 'released' // a Bundle released it (former-bundle label): the sweeper's
  | 'released-with-record' // released, at the coordinates, still carrying a dependency record
  | 'member'
  | 'record'
  | 'applied-hash'
  | 'stamp'
  | 'member-off-coordinates' // written by the operator, the Bundle's member, not at its coordinates
  | 'written-off-coordinates' // written by the operator, not at its coordinates: a dropped dependent if its record names one
  | 'record-off-coordinates' // not at its coordinates, the operator's managedFields entry gone, a recorded dependency reference no one else wrote
  | 'none';

export function orphanEvidence(o: LiveObject, input: Pick<FinalizeInput, 'bundle' | 'coordinates'>): OrphanEvidence {
  const annotations = o.metadata.annotations ?? {};
  const atCoordinates = input.coordinates.has(objectKey(o));
  if (o.metadata.labels?.[Labels.formerBundle] !== undefined)
    return atCoordinates && annotations[Annotations.dependencyReferences] !== undefined ? 'released-with-record' : 'released';
  const member = isMemberOf(o, input.bundle.name, input.bundle.namespace);
  if (!atCoordinates) {
    if (writtenByOperator(o.metadata.managedFields)) return member ? 'member-off-coordinates' : 'written-off-coordinates';
    // Its entry reset or folded away (red team 24): a recorded reference only the operator may have written still tells.
    return recordedReferenceOnlyOperators(o.metadata) ? 'record-off-coordinates' : 'none';
  }
  if (member) return 'member';
  if (annotations[Annotations.dependencyReferences] !== undefined) return 'record';
  if (annotations[Annotations.appliedHash] !== undefined) return 'applied-hash';
  if (annotations[Annotations.deletionTimestamp] !== undefined) return 'stamp';
  return 'none';
}

/**
 * Whether the object shows the Bundle was orphaned: nothing controls it, it
 * is not terminating, and it carries the Bundle's membership at the
 * coordinates, or, on an object no Bundle let go to this one (the let-go
 * mark: this one may have been deleted before it took it), what only the
 * operator writes: at the coordinates its dependency record or applied-hash
 * (the record, which IfNotPresent bookkeeping writes without an
 * applied-hash, is one another tool's part-of label cannot hide: red team
 * 20); off them a dependency record naming an object at them (a dependent
 * the spec dropped, its prune not made yet: red team 21) or an uncontrolled
 * member the operator wrote off them (a dependent dropped with its sibling,
 * nothing left at the coordinates: red team 24). Membership off the
 * coordinates alone and a countdown stamp are no trace, nor is what only a
 * reset of managedFields leaves. Another live Bundle listing the object is
 * no evidence either way (red team 20). `namedUids`: uids of the objects at
 * the coordinates and of those members (tracedUids).
 */
export function isOrphanTrace(o: LiveObject, input: FinalizeInput, namedUids: ReadonlySet<string>): boolean {
  if (controllerOf(o) !== undefined || o.metadata.deletionTimestamp !== undefined) return false;
  const annotations = o.metadata.annotations ?? {};
  const letGoMark = annotations[Annotations.formerBundle] !== undefined;
  switch (orphanEvidence(o, input)) {
    case 'member':
      // The apply writes it and a let-go takes it out, so it outlives no let-go (red team 19).
      return true;
    case 'record':
    case 'applied-hash':
      return !letGoMark;
    case 'member-off-coordinates':
    case 'written-off-coordinates':
      return !letGoMark && recordNamesAny(annotations, namedUids);
    case 'record-off-coordinates':
    case 'stamp':
    case 'released':
    case 'released-with-record':
    case 'none':
      return false;
  }
}

/**
 * Uids a dependency record off the coordinates may name to make an orphan
 * trace: the objects at the coordinates, and the uncontrolled members the
 * operator wrote off them (not terminating; a let-go or release takes the
 * part-of label off, an orphaning too).
 */
export function tracedUids(input: FinalizeInput, coordinateUids: ReadonlySet<string>): Set<string> {
  const out = new Set(coordinateUids);
  for (const o of input.objects)
    if (
      o.metadata.uid !== undefined &&
      controllerOf(o) === undefined &&
      o.metadata.deletionTimestamp === undefined &&
      orphanEvidence(o, input) === 'member-off-coordinates'
    )
      out.add(o.metadata.uid);
  return out;
}

/**
 * Whether an orphan deletion cleans the object: one the Bundle controls or
 * claims, or an uncontrolled one carrying its evidence
 * (`if-its-record-names-one`: off the coordinates, written by the operator
 * or carrying a recorded reference only the operator may have written, a
 * candidate when its dependency record names an object at them or another
 * candidate; see orphanCandidates). A released object is the sweeper's,
 * unless it is at the coordinates with a record still on it.
 */
export function orphanCandidacy(o: LiveObject, input: FinalizeInput): 'candidate' | 'if-its-record-names-one' | 'no' {
  const controller = controllerOf(o);
  if (controller !== undefined) return controller.uid === input.bundle.uid ? 'candidate' : 'no';
  if (o.metadata.ownerReferences?.some((r) => r.uid === input.bundle.uid)) return 'candidate';
  switch (orphanEvidence(o, input)) {
    case 'member':
    case 'record':
    case 'applied-hash':
    case 'stamp':
    case 'member-off-coordinates':
    case 'released-with-record':
      return 'candidate';
    case 'written-off-coordinates':
    case 'record-off-coordinates':
      return 'if-its-record-names-one';
    case 'released':
    case 'none':
      return 'no';
  }
}
