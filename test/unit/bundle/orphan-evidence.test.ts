/**
 * The orphan trace (effectivePropagation's evidence of an orphan deletion)
 * and the orphan candidate (what an orphan deletion cleans) read one
 * evidence: every trace must be a candidate, or an orphan deletion read from
 * a trace would leave the very object that showed it with the operator's
 * references, to be collected through a sibling.
 */
import { Annotations, ApplySetLabels, Labels } from '../../../src/api/names.js';
import { applySetId } from '../../../src/core/bundle/applyset.js';
import { orphanCandidates } from '../../../src/core/bundle/finalize-keep.js';
import type { FinalizeInput } from '../../../src/core/bundle/finalize-types.js';
import { objectKey } from '../../../src/core/bundle/objects.js';
import { isOrphanTrace, orphanEvidence } from '../../../src/core/bundle/orphan-evidence.js';
import { effectivePropagation } from '../../../src/core/bundle/finalize.js';
import { releaseSigner } from '../../../src/core/softdelete/provenance.js';
import {
  BUNDLE_UID,
  NAMESPACE,
  NOW,
  byOperator,
  configMap,
  controlledBy,
  controlledByBundle,
  live,
  terminating,
  withAnnotation,
  withLabel,
  withOwner,
  type Mod,
  type Obj,
} from './builders.js';

const SIBLING = live(configMap('sibling'), controlledByBundle());
const member = withLabel(ApplySetLabels.partOf, applySetId('b', NAMESPACE));

function inputFor(o: Obj, atCoordinates: boolean): FinalizeInput {
  const coordinates = new Set([objectKey(SIBLING), ...(atCoordinates ? [objectKey(o)] : [])]);
  return {
    propagation: 'Orphan',
    bundle: { name: 'b', uid: BUNDLE_UID, namespace: NAMESPACE },
    objects: [SIBLING, o],
    coordinates,
    listings: new Map(),
    now: NOW,
    stampAt: NOW,
    signRelease: releaseSigner(new Uint8Array(32).fill(7)),
  };
}

/** Every combination of what an object may carry of the Bundle. */
function* everyObject(): Generator<{ o: Obj; atCoordinates: boolean; label: string }> {
  const marks: [string, Mod<Obj>][] = [
    ['member', member],
    ['record naming the sibling', withAnnotation(Annotations.dependencyReferences, SIBLING.metadata.uid ?? '')],
    ['record naming another', withAnnotation(Annotations.dependencyReferences, 'elsewhere')],
    ['applied-hash', withAnnotation(Annotations.appliedHash, 'h')],
    ['stamp', withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:00:00Z')],
    ['let-go mark', withAnnotation(Annotations.formerBundle, 'b0')],
    ['released', withLabel(Labels.formerBundle, 'b0')],
    ['written by the operator', byOperator],
    ['terminating', terminating()],
    ['claim', withOwner({ apiVersion: 'smith.atlassian.com/v1', kind: 'Bundle', name: 'b', uid: BUNDLE_UID })],
  ];
  const controllers: [string, Mod<Obj> | undefined][] = [
    ['uncontrolled', undefined],
    ['the Bundle', controlledByBundle()],
    ['another', controlledBy('ReplicaSet', 'rs')],
  ];
  for (let mask = 0; mask < 1 << marks.length; mask++)
    for (const [controllerName, controller] of controllers)
      for (const atCoordinates of [false, true]) {
        const chosen = marks.filter((_, i) => (mask & (1 << i)) !== 0);
        const o = live(configMap('o'), ...chosen.map(([, mod]) => mod), ...(controller === undefined ? [] : [controller]));
        yield {
          o,
          atCoordinates,
          label: `${chosen.map(([n]) => n).join(', ')}; ${controllerName}; ${atCoordinates ? 'at' : 'off'} the coordinates`,
        };
      }
}

describe('orphan evidence', () => {
  it('every orphan trace is an orphan candidate', () => {
    const wrong: string[] = [];
    let traces = 0;
    for (const { o, atCoordinates, label } of everyObject()) {
      const input = inputFor(o, atCoordinates);
      if (!isOrphanTrace(o, input, new Set([SIBLING.metadata.uid ?? '']))) continue;
      traces++;
      if (!orphanCandidates(input, new Set([SIBLING.metadata.uid ?? ''])).includes(o)) wrong.push(label);
    }
    expect(wrong).toEqual([]);
    expect(traces).toBeGreaterThan(100);
  });

  it.each([
    // [what the object carries, at the coordinates, trace]
    ['member', [member], true, true],
    ['member, let-go mark', [member, withAnnotation(Annotations.formerBundle, 'b0')], true, true],
    ['applied-hash', [withAnnotation(Annotations.appliedHash, 'h')], true, true],
    [
      'applied-hash, let-go mark',
      [withAnnotation(Annotations.appliedHash, 'h'), withAnnotation(Annotations.formerBundle, 'b0')],
      true,
      false,
    ],
    ['stamp only', [withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:00:00Z')], true, false],
    ['member off the coordinates, written by the operator', [member, byOperator], false, false],
    [
      'member off the coordinates, a person copy naming the sibling',
      [member, withAnnotation(Annotations.dependencyReferences, 'sibling-uid')],
      false,
      false,
    ],
    [
      'record naming the sibling, off, written by the operator',
      [withAnnotation(Annotations.dependencyReferences, 'sibling-uid'), byOperator],
      false,
      true,
    ],
    [
      'member and record naming the sibling, off, written',
      [member, withAnnotation(Annotations.dependencyReferences, 'sibling-uid'), byOperator],
      false,
      true,
    ],
    ['released with a record', [withLabel(Labels.formerBundle, 'b0'), withAnnotation(Annotations.dependencyReferences, 'x')], true, false],
  ] as [string, Mod<Obj>[], boolean, boolean][])('%s: trace %s', (_label, mods, atCoordinates, trace) => {
    const o = live(configMap('o'), ...mods);
    expect(isOrphanTrace(o, inputFor(o, atCoordinates), new Set(['sibling-uid']))).toBe(trace);
  });

  it('a dependent dropped with its sibling, nothing left at the coordinates: the pair is a trace (red team 24)', () => {
    const p = live(configMap('p'), member, byOperator);
    const c = live(configMap('c'), member, byOperator, withAnnotation(Annotations.dependencyReferences, p.metadata.uid ?? ''));
    const background = (objects: Obj[]): FinalizeInput => ({
      ...inputFor(c, false),
      propagation: 'Background',
      objects,
      coordinates: new Set(),
    });
    expect(effectivePropagation(background([p, c]))).toBe('Orphan');
    // Either alone, or the sibling a person's (not written by the operator), or controlled: no trace.
    expect(effectivePropagation(background([p]))).toBe('Background');
    expect(effectivePropagation(background([c]))).toBe('Background');
    const personsSibling = live(configMap('p'), member);
    expect(effectivePropagation(background([personsSibling, c]))).toBe('Background');
    const controlledSibling = live(configMap('p'), member, byOperator, controlledByBundle());
    expect(effectivePropagation(background([controlledSibling, c]))).toBe('Background');
  });

  it('reads the strongest mark at the coordinates first', () => {
    const o = live(configMap('o'), member, withAnnotation(Annotations.appliedHash, 'h'));
    expect(orphanEvidence(o, inputFor(o, true))).toBe('member');
    expect(orphanEvidence(o, inputFor(o, false))).toBe('none');
  });
});
