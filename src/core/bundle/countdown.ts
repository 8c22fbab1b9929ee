/**
 * What a soft-delete decision reads of one live object: its annotations,
 * with a countdown stamp only when this operator proved it, and the floor
 * its rules may not go below (stricterRules): what its stamp seals, what its
 * manifest declared when applied (over the Bundle's defaults), and any rules
 * the caller adds (the finalizer: the manifest of the Bundle being
 * deleted). Every path that decides a soft delete reads through here, so an
 * edit by hand can put a deletion off and never bring it forward. Pure.
 */
import type { DeletionDefaults } from '../../api/bundle.js';
import { stricterRules, type DeletionRules } from '../softdelete/rules.js';
import { declaredFloor, provenCountdown, type CountdownReading, type DeclaredIdentity, type StampSeal } from '../softdelete/stamp-seal.js';
import { groupOf, keyGroupOf, type LiveObject } from './objects.js';

/** The identity a declared-rules proof binds: group and kind, namespace, name. */
export function declaredIdentityOf(o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string | undefined } }, namespace?: string): DeclaredIdentity {
  return { group: keyGroupOf(groupOf(o.apiVersion), o.kind), kind: o.kind, namespace: namespace ?? o.metadata.namespace ?? '', name: o.metadata.name };
}

const stricterOf = (a: DeletionRules | undefined, b: DeletionRules | undefined): DeletionRules | undefined => (a === undefined ? b : stricterRules(a, b));

export function countdownOf(o: LiveObject, context: { seal: StampSeal | undefined; defaults: DeletionDefaults | undefined; extra?: DeletionRules | undefined }): CountdownReading {
  const reading = provenCountdown(o.metadata.annotations, o.metadata.uid, context.seal);
  const declared = declaredFloor(o.metadata.annotations, declaredIdentityOf(o), context.defaults, context.seal);
  const floor = stricterOf(stricterOf(reading.floor, declared), context.extra);
  return floor === undefined ? { annotations: reading.annotations } : { annotations: reading.annotations, floor };
}
