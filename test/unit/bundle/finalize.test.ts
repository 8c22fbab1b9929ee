import type { OwnerReference } from '../../../src/api/resource.js';
import { API_VERSION, Annotations, ApplySetLabels, BUNDLE_KIND, Finalizers, Labels } from '../../../src/api/names.js';
import { applySetId } from '../../../src/core/bundle/applyset.js';
import { planFinalize, whileTracesWait } from '../../../src/core/bundle/finalize.js';
import { propagationOf, type FinalizeInput, type FinalizeStep } from '../../../src/core/bundle/finalize-types.js';
import type { DeletionPropagation } from '../../../src/api/names.js';
import { finalizeNext } from '../../../src/core/bundle/next-pass.js';
import { objectKey, type JsonPatchOperation } from '../../../src/core/bundle/objects.js';
import type { BundleListing } from '../../../src/core/bundle/ownership.js';
import { checkReleaseProof, releaseSigner } from '../../../src/core/softdelete/provenance.js';
import {
  BUNDLE_UID,
  NOW,
  byOperator,
  configMap,
  object,
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

const OTHER: BundleListing = { name: 'b2', uid: 'b2-uid', creationTimestamp: '2025-01-01T00:00:00Z' };
const delayed = withAnnotation(Annotations.deletionDelay, '1h');
const stamped = withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:30:00Z');
const depRef = (uid: string): OwnerReference => ({ apiVersion: 'v1', kind: 'ConfigMap', name: uid, uid, blockOwnerDeletion: true });
const userRef: OwnerReference = { apiVersion: 'example.com/v1', kind: 'Owner', name: 'mine', uid: 'user-uid' };
const bundleRef = (uid = BUNDLE_UID, controller = true): OwnerReference => ({
  apiVersion: API_VERSION,
  kind: BUNDLE_KIND,
  name: 'b',
  uid,
  controller,
  blockOwnerDeletion: true,
});
/** A claim reference to a Bundle, recorded in the claimReferences annotation as the operator writes it. */
const claimedWith =
  (ref: OwnerReference): Mod<Obj> =>
  (o) => {
    withOwner(ref)(o);
    const recorded = o.metadata.annotations?.[Annotations.claimReferences];
    withAnnotation(Annotations.claimReferences, recorded === undefined ? ref.uid : `${recorded},${ref.uid}`)(o);
  };
/** A dependency reference to `uid`, recorded in the annotation as the operator writes it. */
const dependsOn =
  (uid: string): Mod<Obj> =>
  (o) => {
    withOwner(depRef(uid))(o);
    withAnnotation(Annotations.dependencyReferences, uid)(o);
  };
const keyOf = (o: Obj): string => objectKey(o);

const KEY = new Uint8Array(32).fill(7);

function input(propagation: DeletionPropagation, objects: Obj[], extra: Partial<FinalizeInput> = {}): FinalizeInput {
  return {
    propagation,
    bundle: { name: 'b', uid: BUNDLE_UID },
    objects,
    coordinates: new Set(),
    listings: new Map(),
    now: NOW,
    stampAt: NOW + 500,
    signRelease: releaseSigner(KEY),
    ...extra,
  };
}
const listedBy = (o: Obj, claim = OTHER): Map<string, BundleListing[]> => new Map([[keyOf(o), [claim]]]);
/** Applies a JSON patch's replace/add/remove ops to a copy (tests checked separately). */
function patched(o: Obj, patch: readonly JsonPatchOperation[]): Obj {
  const copy = structuredClone(o);
  for (const op of patch) {
    const [, , field, rawKey] = op.path.split('/');
    const key = rawKey?.replaceAll('~1', '/').replaceAll('~0', '~');
    const meta = copy.metadata as unknown as Record<string, unknown>;
    if (op.op === 'test' || field === undefined) continue;
    if (key === undefined) {
      if (op.op === 'remove') delete meta[field];
      else meta[field] = structuredClone(op.value);
      continue;
    }
    const map = (meta[field] ?? {}) as Record<string, unknown>;
    if (op.op === 'remove') delete map[key];
    else map[key] = op.value;
    meta[field] = map;
  }
  return copy;
}
const summary = (steps: FinalizeStep[]): string[] =>
  steps.map((s) => `${s.action}:${s.target.name}${s.action === 'leave' ? `(${s.reason})` : ''}`);

describe('propagationOf', () => {
  it.each<[string[] | undefined, DeletionPropagation]>([
    [undefined, 'Background'],
    [[Finalizers.deleteResources], 'Background'],
    [[Finalizers.deleteResources, Finalizers.foregroundDeletion], 'Foreground'],
    [[Finalizers.orphan, Finalizers.deleteResources], 'Orphan'],
    [[Finalizers.foregroundDeletion, Finalizers.orphan], 'Orphan'],
  ])('%j -> %s', (finalizers, expected) => {
    expect(propagationOf(finalizers)).toBe(expected);
  });
});

describe('planFinalize: what each object gets, per propagation', () => {
  const plain = live(configMap('plain'), controlledByBundle());
  const withDelay = live(configMap('delay'), controlledByBundle(), delayed);
  const counting = live(configMap('counting'), controlledByBundle(), delayed, stamped);
  const badDelay = live(configMap('bad'), controlledByBundle(), withAnnotation(Annotations.deletionDelay, 'soon'));
  const going = live(configMap('going'), controlledByBundle(), terminating());
  const elsewhere = live(configMap('elsewhere'), controlledByBundle(), delayed, stamped);
  const notOurs = live(configMap('theirs'), controlledBy('ReplicaSet', 'rs'));
  const claims = listedBy(elsewhere);

  it.each<[DeletionPropagation, string, Obj]>([
    ['Background', 'delete:plain', plain],
    ['Background', 'release:delay', withDelay],
    ['Background', 'release:counting', counting],
    ['Background', 'release:bad', badDelay],
    ['Background', 'leave:going(terminating)', going],
    ['Background', 'let-go:elsewhere', elsewhere],
    ['Foreground', 'leave:plain(collector-deletes)', plain],
    ['Foreground', 'leave:delay(collector-deletes)', withDelay],
    ['Foreground', 'leave:counting(collector-deletes)', counting],
    ['Foreground', 'leave:going(terminating)', going],
    ['Foreground', 'let-go:elsewhere', elsewhere],
    // Red team 5: nothing is deleted on a value that could not be read, the cascade included.
    ['Foreground', 'release:bad', badDelay],
    ['Orphan', 'orphan:plain', plain],
    ['Orphan', 'orphan:delay', withDelay],
    ['Orphan', 'leave:going(terminating)', going],
    ['Orphan', 'let-go:elsewhere', elsewhere],
  ])('%s: %s', (propagation, expected, o) => {
    const plan = planFinalize(input(propagation, [o, notOurs], { listings: claims }));
    expect(summary(plan.steps)).toEqual([expected]);
    expect(plan.done).toBe(expected.startsWith('leave'));
  });

  it('an object controlled by someone else is never a step, whatever the propagation', () => {
    for (const p of ['Background', 'Foreground', 'Orphan'] as const) {
      const plan = planFinalize(
        input(p, [notOurs, live(configMap('theirs-annotated'), controlledBy('ReplicaSet', 'rs'), dependsOn('x'))], {
          coordinates: new Set([keyOf(notOurs)]),
        }),
      );
      expect(plan.steps).toEqual([]);
      expect(plan.done).toBe(true);
    }
  });

  it('background: dependents are deleted before what they reference', () => {
    const base = live(configMap('base'), controlledByBundle());
    const top = live(configMap('top'), controlledByBundle(), dependsOn('base-uid'));
    expect(summary(planFinalize(input('Background', [base, top])).steps)).toEqual(['delete:top', 'delete:base']);
  });

  it('background: a delete carries the uid and resourceVersion it was decided on', () => {
    const [step] = planFinalize(input('Background', [live(plain, (o) => (o.metadata.resourceVersion = '42'))])).steps;
    expect(step?.target).toMatchObject({ uid: 'plain-uid', resourceVersion: '42' });
  });
});

describe('the patches: what is left on the object', () => {
  const web = live(configMap('web'), controlledByBundle(), dependsOn('cfg-uid'), withOwner(userRef), delayed);

  it("release with countdown: only the user's references, no bookkeeping, the former-bundle label and a stamp at the upper bound", () => {
    const [step] = planFinalize(input('Background', [web])).steps;
    expect(step?.action).toBe('release');
    if (step?.action !== 'release') return;
    expect(step.patch[0]).toEqual({ op: 'test', path: '/metadata/ownerReferences', value: web.metadata.ownerReferences });
    const after = patched(web, step.patch);
    expect(after.metadata.ownerReferences).toEqual([userRef]);
    expect(after.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();
    expect(after.metadata.labels?.[Labels.formerBundle]).toBe('b');
    expect(after.metadata.annotations?.[Annotations.deletionTimestamp]).toBe('2026-01-01T00:00:00.500Z');
    // Signed over what the release leaves on the object: the sweeper's check passes on it, and on nothing else.
    expect(checkReleaseProof(KEY, after.metadata)).toEqual({ proven: true });
    expect(checkReleaseProof(new Uint8Array(32).fill(8), after.metadata).proven).toBe(false);
  });

  it('a release that keeps a running countdown signs the stamp already there', () => {
    const counting = live(configMap('web'), controlledByBundle(), delayed, stamped);
    const [step] = planFinalize(input('Background', [counting])).steps;
    if (step?.action !== 'release') throw new Error('expected a release');
    const after = patched(counting, step.patch);
    expect(after.metadata.annotations?.[Annotations.deletionTimestamp]).toBe('2025-12-31T23:30:00Z');
    expect(checkReleaseProof(KEY, after.metadata)).toEqual({ proven: true });
  });

  it.each<DeletionPropagation>(['Background', 'Foreground', 'Orphan'])(
    "%s: let-go to another live Bundle keeps the user's references only, starts no countdown",
    (propagation) => {
      const [step] = planFinalize(input(propagation, [web], { listings: listedBy(web) })).steps;
      expect(step?.action).toBe('let-go');
      if (step?.action !== 'let-go') return;
      expect(step.by).toEqual(OTHER);
      const after = patched(web, step.patch);
      expect(after.metadata.ownerReferences).toEqual([userRef]);
      expect(after.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();
      expect(after.metadata.labels?.[Labels.formerBundle]).toBeUndefined();
      // Marked with the Bundle it left (the annotation only: nothing sweeps it), until the taker's claim removes it.
      expect(after.metadata.annotations?.[Annotations.formerBundle]).toBe('b');
      expect(after.metadata.annotations?.[Annotations.deletionTimestamp]).toBeUndefined();
    },
  );

  it('the Bundle being deleted does not count as a claim on its own objects', () => {
    const self: BundleListing = { name: 'b', uid: BUNDLE_UID };
    expect(summary(planFinalize(input('Foreground', [web], { listings: listedBy(web, self) })).steps)).toEqual([
      'leave:web(collector-deletes)',
    ]);
  });

  it("orphan: the user's references stay, the dependency references, the annotation and a countdown stamp go", () => {
    const countingWeb = live(web, stamped);
    const [step] = planFinalize(input('Orphan', [countingWeb])).steps;
    expect(step?.action).toBe('orphan');
    if (step?.action !== 'orphan') return;
    const after = patched(countingWeb, step.patch);
    expect(after.metadata.ownerReferences).toEqual([userRef]);
    expect(after.metadata.annotations).toEqual({ [Annotations.deletionDelay]: '1h' });
  });
});

describe('orphan: what the collector orphaned before the finalizer saw it', () => {
  // The collector took the Bundle's reference out; the dependency reference and its record stay.
  const orphanedByCollector = live(configMap('web'), dependsOn('cfg-uid'), withOwner(userRef));
  const coordinates = new Set([keyOf(orphanedByCollector)]);

  it.each<[string, Obj, Set<string>, string[]]>([
    ["at one of the Bundle's coordinates, with the operator's annotation: cleaned", orphanedByCollector, coordinates, ['orphan:web']],
    ["not at the Bundle's coordinates: not the Bundle's to touch", orphanedByCollector, new Set(), []],
    [
      'without the annotation: nothing says what the operator wrote',
      live(configMap('web'), withOwner(depRef('cfg-uid')), withOwner(userRef)),
      coordinates,
      [],
    ],
    [
      'still naming the Bundle without being controlled: cleaned',
      live(configMap('web'), claimedWith(bundleRef(BUNDLE_UID, false)), withOwner(userRef)),
      new Set(),
      ['orphan:web'],
    ],
    ["only the user's references left: done", live(configMap('web'), withOwner(userRef)), coordinates, []],
    [
      'counting down, orphaned before the finalizer saw it: the stamp goes',
      live(configMap('web'), delayed, stamped, withOwner(userRef)),
      coordinates,
      ['orphan:web'],
    ],
    [
      "released by a Bundle (former-bundle label): the sweeper's, untouched",
      live(configMap('web'), delayed, stamped, (o) => (o.metadata.labels = { [Labels.formerBundle]: 'b0' })),
      coordinates,
      [],
    ],
    [
      'controlled by another Bundle, annotation and all: untouched',
      live(configMap('web'), withOwner(bundleRef('b2-uid')), dependsOn('cfg-uid')),
      coordinates,
      [],
    ],
  ])('%s', (_name, o, coords, expected) => {
    const plan = planFinalize(input('Orphan', [o], { coordinates: coords }));
    expect(summary(plan.steps)).toEqual(expected);
    expect(plan.done).toBe(expected.length === 0);
    const step = plan.steps[0];
    if (step?.action === 'orphan') expect(patched(o, step.patch).metadata.ownerReferences).toEqual([userRef]);
  });

  it("not at the Bundle's coordinates but depending on an object there (a dependent dropped from the spec, its prune held back): cleaned", () => {
    const sibling = live(configMap('cfg'), (o) => (o.metadata.uid = 'cfg-uid'));
    const dropped = live(configMap('web'), dependsOn('cfg-uid'), withOwner(userRef), byOperator);
    const plan = planFinalize(input('Orphan', [sibling, dropped], { coordinates: new Set([keyOf(sibling)]) }));
    expect(summary(plan.steps)).toEqual(['orphan:web']);
    const step = plan.steps[0];
    if (step?.action === 'orphan') expect(patched(dropped, step.patch).metadata.ownerReferences).toEqual([userRef]);
    // Depending on an object the Bundle does not hold: not the Bundle's to touch.
    expect(planFinalize(input('Orphan', [dropped], { coordinates: new Set([keyOf(sibling)]) })).steps).toEqual([]);
  });

  // Red team 21: both the dependent and its sibling were dropped from the spec (prune held back): the dependent is
  // cleaned as this Bundle's member, and a reference to an object at the coordinates whose record another tool blanked
  // is still told the operator's by its field manager.
  it("off the coordinates, this Bundle's member is cleaned; objects at the coordinates are siblings whether or not they are candidates", () => {
    const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
    const member = withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1'));
    const droppedSibling = live(configMap('p'), member, (o) => (o.metadata.uid = 'p-uid'), byOperator);
    const droppedDependent = live(configMap('c'), member, dependsOn('p-uid'), withOwner(userRef), byOperator);
    const pair = planFinalize(input('Orphan', [droppedSibling, droppedDependent], { coordinates: new Set(), ...withNs }));
    const step = pair.steps.find((s) => s.target.name === 'c');
    expect(step?.action).toBe('orphan');
    if (step?.action === 'orphan') expect(patched(droppedDependent, step.patch).metadata.ownerReferences).toEqual([userRef]);

    const listed = live(configMap('p'), (o) => (o.metadata.uid = 'p-uid'));
    const blanked = live(configMap('c'), withOwner(depRef('p-uid')), withOwner(userRef), (o) => {
      o.metadata.annotations = { [Annotations.dependencyReferences]: '' };
      o.metadata.managedFields = [
        { manager: 'bundlesmith', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"p-uid"}': {} } } } },
      ];
    });
    const cleaned = planFinalize(input('Orphan', [listed, blanked], { coordinates: new Set([keyOf(listed), keyOf(blanked)]), ...withNs }));
    const cStep = cleaned.steps.find((s) => s.target.name === 'c');
    expect(cStep?.action).toBe('orphan');
    if (cStep?.action === 'orphan') expect(patched(blanked, cStep.patch).metadata.ownerReferences).toEqual([userRef]);
  });

  // Red team 22: another ApplySet relabelled the dropped dependent, whose dropped sibling is a candidate; and at the
  // coordinates another tool removed the record altogether (the applied-hash still says the operator applied it).
  it('orphan: the steps that take a trace off come last, the members traces name after them (red team 25)', () => {
    const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
    const event = live(object('v1', 'Event', 'ev'), controlledByBundle());
    const traced = live(configMap('t'), withAnnotation(Annotations.appliedHash, 'sha256:x'));
    const p = live(configMap('p'), withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')), (o) => (o.metadata.uid = 'p-uid'), byOperator);
    const c = live(configMap('c'), dependsOn('p-uid'), byOperator);
    const plan = planFinalize(
      input('Background', [p, traced, c, event], { coordinates: new Set([keyOf(traced), keyOf(event)]), ...withNs }),
    );
    expect(plan.propagation).toBe('Orphan');
    expect(plan.steps.map((s) => s.target.name)).toEqual(['ev', 't', 'c', 'p']);
    expect(plan.traceStepsFrom).toBe(1);
    // The first pass, the collector not done yet: the object it will orphan (a trace then) still goes after the Event.
    const held = live(
      configMap('x'),
      controlledByBundle(),
      withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')),
      withAnnotation(Annotations.appliedHash, 'h'),
    );
    const heldEvent = live(
      object('v1', 'Event', 'ev'),
      controlledByBundle(),
      withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')),
      withAnnotation(Annotations.appliedHash, 'h'),
    );
    const first = planFinalize(input('Orphan', [held, heldEvent], { coordinates: new Set([keyOf(held), keyOf(heldEvent)]), ...withNs }));
    expect(first.steps.map((s) => s.target.name)).toEqual(['ev', 'x']);
    expect(first.traceStepsFrom).toBe(1);
    // Off the coordinates too: a dropped pair the Bundle still controls becomes a trace once the collector has taken its
    // reference out, so it waits for the Event (the review of red team 25).
    const a = live(
      configMap('a'),
      controlledByBundle(),
      withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')),
      (o) => (o.metadata.uid = 'a-uid'),
      byOperator,
    );
    const bDep = live(
      configMap('bd'),
      controlledByBundle(),
      withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')),
      dependsOn('a-uid'),
      byOperator,
    );
    const pair = planFinalize(input('Orphan', [a, bDep, heldEvent], { coordinates: new Set([keyOf(heldEvent)]), ...withNs }));
    // Both are members the other's trace may name: both after the Event.
    expect(pair.steps.map((s) => s.target.name)).toEqual(['ev', 'a', 'bd']);
    expect(pair.traceStepsFrom).toBe(1);
    // While the traces wait, only the operator's references go: the marks stay.
    const waiting = pair.steps.slice(1).map((s) => whileTracesWait(s));
    for (const [i, w] of waiting.entries()) {
      const o = [a, bDep][i] as Obj;
      expect(w?.action).toBe('orphan');
      const after = w && 'patch' in w ? patched(o, w.patch) : o;
      expect(after.metadata.ownerReferences ?? []).toEqual([]);
      expect(after.metadata.labels?.[ApplySetLabels.partOf]).toBe(applySetId('b', 'ns1'));
    }
    expect(
      patched(bDep, (waiting[0] as { patch: JsonPatchOperation[] }).patch).metadata.annotations?.[Annotations.dependencyReferences],
    ).toBe('a-uid');
    // Nothing to order in the other propagations.
    expect(planFinalize(input('Background', [event], { coordinates: new Set([keyOf(event)]) })).traceStepsFrom).toBeUndefined();
  });

  it('orphaning takes the applied-hash off, and a background deletion disowning an object too (red team 24)', () => {
    const hashed = live(configMap('h'), withAnnotation(Annotations.appliedHash, 'sha256:x'));
    const orphaned = planFinalize(input('Orphan', [hashed], { coordinates: new Set([keyOf(hashed)]) }));
    const step = orphaned.steps.find((s) => s.target.name === 'h');
    expect(step?.action).toBe('orphan');
    expect(
      step && 'patch' in step ? patched(hashed, step.patch).metadata.annotations?.[Annotations.appliedHash] : 'no patch',
    ).toBeUndefined();
    const owned = live(configMap('d'), controlledByBundle(), withOwner(userRef), withAnnotation(Annotations.appliedHash, 'sha256:x'));
    const disowned = planFinalize(input('Background', [owned], { coordinates: new Set([keyOf(owned)]) })).steps.find(
      (s) => s.action === 'disown',
    );
    expect(
      disowned && 'patch' in disowned ? patched(owned, disowned.patch).metadata.annotations?.[Annotations.appliedHash] : 'no patch',
    ).toBeUndefined();
  });

  it('a dependent whose record names another candidate is one too; at the coordinates the applied-hash makes one', () => {
    const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
    const droppedSibling = live(
      configMap('p'),
      withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')),
      (o) => (o.metadata.uid = 'p-uid'),
      byOperator,
    );
    const relabelled = live(
      configMap('c'),
      withLabel(ApplySetLabels.partOf, 'applyset-other-v1'),
      dependsOn('p-uid'),
      withOwner(userRef),
      byOperator,
    );
    const chain = planFinalize(input('Orphan', [droppedSibling, relabelled], { coordinates: new Set(), ...withNs }));
    expect(summary(chain.steps)).toContain('orphan:c');
    // A person's copy of the dependent (it names the same sibling, with the same labels) is not the Bundle's to clean (red team 23).
    // The API server records the person's field manager as the writer of the references they applied.
    const byPerson = (o: Obj): void => {
      o.metadata.managedFields = [
        { manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"p-uid"}': {} } } } },
      ];
    };
    const copy = live(
      configMap('copy'),
      withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')),
      dependsOn('p-uid'),
      withOwner(userRef),
      byPerson,
    );
    expect(summary(planFinalize(input('Orphan', [droppedSibling, copy], { coordinates: new Set(), ...withNs })).steps)).not.toContain(
      'orphan:copy',
    );
    // The operator's own dependent whose managedFields were reset (or whose entry the cap of ten update managers
    // folded into ancient-changes) is still cleaned: no one else wrote its recorded reference (red team 24).
    for (const managedFields of [
      undefined,
      [
        {
          manager: 'ancient-changes',
          operation: 'Update',
          fieldsV1: { 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"p-uid"}': {} } } },
        },
      ],
    ]) {
      const reset = live(configMap('c'), dependsOn('p-uid'), withOwner(userRef), (o) => {
        if (managedFields === undefined) delete o.metadata.managedFields;
        else o.metadata.managedFields = managedFields;
      });
      expect(summary(planFinalize(input('Orphan', [droppedSibling, reset], { coordinates: new Set(), ...withNs })).steps)).toContain(
        'orphan:c',
      );
    }

    const listed = live(configMap('p'), (o) => (o.metadata.uid = 'p-uid'));
    const unrecorded = live(
      configMap('c'),
      withAnnotation(Annotations.appliedHash, 'sha256:x'),
      withOwner(depRef('p-uid')),
      withOwner(userRef),
      (o) => {
        o.metadata.managedFields = [
          { manager: 'bundlesmith', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"p-uid"}': {} } } } },
        ];
      },
    );
    const plan = planFinalize(
      input('Orphan', [listed, unrecorded], { coordinates: new Set([keyOf(listed), keyOf(unrecorded)]), ...withNs }),
    );
    const step = plan.steps.find((x) => x.target.name === 'c');
    expect(step?.action).toBe('orphan');
    if (step?.action === 'orphan') expect(patched(unrecorded, step.patch).metadata.ownerReferences).toEqual([userRef]);
  });

  it("orphaning takes the Bundle's part-of label off: the object leaves its ApplySet (red team 23: a Bundle re-created under the name found it a member)", () => {
    const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
    const member = live(configMap('web'), withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')), withOwner(userRef));
    const [step] = planFinalize(input('Orphan', [member], { coordinates: new Set([keyOf(member)]), ...withNs })).steps;
    expect(step?.action).toBe('orphan');
    if (step?.action !== 'orphan') return;
    expect(patched(member, step.patch).metadata.labels?.[ApplySetLabels.partOf]).toBeUndefined();
    expect(patched(member, step.patch).metadata.ownerReferences).toEqual([userRef]);
  });

  it('a member still controlled by the Bundle (an Event the collector never orphans): the part-of label is removed once, with the reference', () => {
    const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
    const event = live(configMap('ev'), controlledByBundle(), withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')));
    const [step] = planFinalize(input('Orphan', [event], { coordinates: new Set([keyOf(event)]), ...withNs })).steps;
    expect(step?.action).toBe('orphan');
    if (step?.action !== 'orphan') return;
    expect(step.patch.filter((op) => op.op === 'remove' && op.path.includes('part-of'))).toHaveLength(1);
  });

  it('an object with no ownerReferences left at all: the annotation goes, guarded by the resourceVersion', () => {
    const bare = live(
      configMap('bare'),
      withAnnotation(Annotations.dependencyReferences, 'cfg-uid'),
      (o) => (o.metadata.resourceVersion = '7'),
    );
    const [step] = planFinalize(input('Orphan', [bare], { coordinates: new Set([keyOf(bare)]) })).steps;
    expect(step?.action).toBe('orphan');
    if (step?.action !== 'orphan') return;
    expect(step.patch).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'remove', path: `/metadata/annotations/${Annotations.dependencyReferences.replace('/', '~1')}` },
    ]);
  });

  it("objects applied before references were recorded: a blocking reference to a sibling is the operator's", () => {
    const cfg = live(configMap('cfg'), controlledByBundle());
    const legacy = live(configMap('web'), controlledByBundle(), withOwner(depRef('cfg-uid')), withOwner(userRef), (o) => {
      // What the operator's apply left in managedFields: the reference is its own.
      o.metadata.managedFields = [
        { manager: 'bundlesmith', operation: 'Apply', fieldsV1: { 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"cfg-uid"}': {} } } } },
      ];
    });
    const step = planFinalize(input('Orphan', [cfg, legacy])).steps.find((s) => s.target.name === 'web');
    expect(step?.action).toBe('orphan');
    if (step?.action === 'orphan') expect(patched(legacy, step.patch).metadata.ownerReferences).toEqual([userRef]);
  });
});

describe('effectivePropagation: an orphan deletion recorded by an earlier pass (red team 26)', () => {
  const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
  // The traces erased by hand (the ConfigMap orphaned, nothing left on it), the Event still controlled.
  const erased = live(configMap('x'));
  const event = live(object('v1', 'Event', 'ev'), controlledByBundle());
  const at = { coordinates: new Set([keyOf(erased), keyOf(event)]), ...withNs };

  it('no trace and no record: background, the Event deleted', () => {
    const plan = planFinalize(input('Background', [erased, event], at));
    expect(plan.propagation).toBe('Background');
    expect(plan.steps.find((s) => s.target.name === 'ev')?.action).toBe('delete');
  });

  it('recorded: orphan, whatever the objects carry; the Event orphaned, nothing deleted', () => {
    const plan = planFinalize(input('Background', [erased, event], { ...at, recordedOrphan: true }));
    expect(plan.propagation).toBe('Orphan');
    expect(plan.steps.some((s) => s.action === 'delete')).toBe(false);
    expect(plan.steps.find((s) => s.target.name === 'ev')?.action).toBe('orphan');
  });

  it('a later foreground deletion is read as asked: the record does not hide the foregroundDeletion finalizer', () => {
    expect(planFinalize(input('Foreground', [event], { ...at, recordedOrphan: true })).propagation).toBe('Foreground');
  });
});

describe("effectivePropagation: the collector removed the orphan finalizer before the finalizer's first pass", () => {
  const applied = withAnnotation(Annotations.appliedHash, 'sha256:x');
  const at = (...objs: Obj[]): Set<string> => new Set(objs.map(keyOf));
  const orphaned = live(configMap('cfg'), applied);
  const controlled = live(configMap('plain'), controlledByBundle(), applied);

  it.each<[string, Obj[], Set<string>, Map<string, BundleListing[]> | undefined, DeletionPropagation]>([
    [
      'an applied object at its coordinates that nothing controls: orphan',
      [orphaned, controlled],
      at(orphaned, controlled),
      undefined,
      'Orphan',
    ],
    ['everything still controlled: background', [controlled], at(controlled), undefined, 'Background'],
    [
      'released (former-bundle label): background',
      [live(orphaned, (o) => (o.metadata.labels = { [Labels.formerBundle]: 'b' }))],
      at(orphaned),
      undefined,
      'Background',
    ],
    [
      'let go to another live Bundle (its mark): background',
      [live(orphaned, withAnnotation(Annotations.formerBundle, 'b'))],
      at(orphaned),
      listedBy(orphaned),
      'Background',
    ],
    // Red team 20: another live Bundle listing it (an invalid spec that never took it) is no evidence either way.
    ['listed by another live Bundle, never let go: orphan', [orphaned], at(orphaned), listedBy(orphaned), 'Orphan'],
    [
      'the dependency record alone (IfNotPresent bookkeeping, part-of rewritten by another tool): orphan',
      [live(configMap('cfg'), withAnnotation(Annotations.dependencyReferences, 'p-uid'))],
      at(orphaned),
      undefined,
      'Orphan',
    ],
    // Fuzz seed 19412: let go to this Bundle by another (foreground deletion), and this one deleted before it took it.
    [
      'let go to this Bundle by another, not taken yet (former-bundle annotation): background',
      [live(orphaned, withAnnotation(Annotations.formerBundle, 'b2'))],
      at(orphaned),
      undefined,
      'Background',
    ],
    ['not at its coordinates: background', [orphaned], new Set(), undefined, 'Background'],
    ['never applied by the operator (no applied-hash): background', [live(configMap('cfg'))], at(orphaned), undefined, 'Background'],
  ])('%s', (_name, objects, coordinates, claims, expected) => {
    const plan = planFinalize(input('Background', objects, { coordinates, ...(claims ? { listings: claims } : {}) }));
    expect(plan.propagation).toBe(expected);
    // Orphan deletes nothing.
    if (expected === 'Orphan') expect(plan.steps.filter((s) => s.action === 'delete')).toEqual([]);
  });

  // Red team 19: the trace must survive what the let-go mark and the IfNotPresent bookkeeping leave on an object.
  it("a member of the Bundle's ApplySet that nothing controls: orphan, whatever mark of a let-go it carries and without an applied-hash", () => {
    const member = withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1'));
    const taken = live(configMap('cfg'), member, withAnnotation(Annotations.formerBundle, 'a'));
    const adoptedAsIs = live(configMap('cfg'), member);
    const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
    expect(planFinalize(input('Background', [taken], { coordinates: at(taken), ...withNs })).propagation).toBe('Orphan');
    expect(planFinalize(input('Background', [adoptedAsIs], { coordinates: at(adoptedAsIs), ...withNs })).propagation).toBe('Orphan');
    // Another Bundle's member is no trace of this one's.
    const othersMember = live(configMap('cfg'), withLabel(ApplySetLabels.partOf, applySetId('other', 'ns1')));
    expect(planFinalize(input('Background', [othersMember], { coordinates: at(othersMember), ...withNs })).propagation).toBe('Background');
  });

  // Red team 21: the spec dropped a dependent whose prune was not made yet, and the only trace is on it.
  it('off the coordinates: a dependency record naming an object at them, on an object the operator wrote, is a trace (red team 21)', () => {
    const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
    const kept = live(configMap('p'), (o) => (o.metadata.uid = 'p-uid'));
    const droppedDependent = live(configMap('c'), withAnnotation(Annotations.dependencyReferences, 'p-uid'), byOperator);
    const plan = (o: Obj) => planFinalize(input('Background', [kept, o], { coordinates: at(kept), ...withNs }));
    expect(plan(droppedDependent).propagation).toBe('Orphan');
    // A record naming nothing at the coordinates, an applied-hash alone, or a released one: no trace.
    expect(plan(live(configMap('c'), withAnnotation(Annotations.dependencyReferences, 'elsewhere-uid'), byOperator)).propagation).toBe(
      'Background',
    );
    expect(plan(live(configMap('c'), applied, byOperator)).propagation).toBe('Background');
    expect(plan(live(droppedDependent, (o) => (o.metadata.labels = { [Labels.formerBundle]: 'b' }))).propagation).toBe('Background');
  });

  // Red team 23: a person's copy carries the labels and annotations; the part-of label names the Bundle by name only.
  it("off the coordinates, a person's copy (the operator wrote none of it) or the Bundle's membership alone is no trace", () => {
    const withNs = { bundle: { name: 'b', uid: BUNDLE_UID, namespace: 'ns1' } };
    const kept = live(configMap('p'), (o) => (o.metadata.uid = 'p-uid'));
    const plan = (o: Obj) => planFinalize(input('Background', [kept, o], { coordinates: at(kept), ...withNs }));
    const copy = live(
      configMap('copy'),
      withAnnotation(Annotations.dependencyReferences, 'p-uid'),
      withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')),
    );
    expect(plan(copy).propagation).toBe('Background');
    const predecessors = live(configMap('old'), withLabel(ApplySetLabels.partOf, applySetId('b', 'ns1')), byOperator);
    expect(plan(predecessors).propagation).toBe('Background');
  });

  it('foreground and orphan finalizers are taken as they are', () => {
    expect(planFinalize(input('Foreground', [orphaned], { coordinates: at(orphaned) })).propagation).toBe('Foreground');
  });
});

describe('finalizeNext', () => {
  it.each<[string, { wrote: number; changed: number; failed: number }, ReturnType<typeof finalizeNext>]>([
    ['wrote: decide again soon on fresh lists', { wrote: 2, changed: 0, failed: 0 }, { kind: 'after', ms: 500 }],
    ['changed under us: decide again soon', { wrote: 0, changed: 1, failed: 0 }, { kind: 'after', ms: 500 }],
    ['a failure: retry with backoff', { wrote: 1, changed: 1, failed: 1 }, { kind: 'retry' }],
  ])('%s', (_name, outcome, expected) => {
    expect(finalizeNext(outcome, 500)).toEqual(expected);
  });
});

describe('claims: a Bundle that lost a Conflict recorded a non-controller reference to itself', () => {
  const claimRef = (uid: string, name: string): OwnerReference => ({
    apiVersion: API_VERSION,
    kind: BUNDLE_KIND,
    name,
    uid,
    controller: false,
    blockOwnerDeletion: false,
  });

  it.each<DeletionPropagation>(['Background', 'Foreground', 'Orphan'])(
    '%s: the claim on an object another Bundle controls is withdrawn, nothing else',
    (propagation) => {
      const theirs = live(
        configMap('theirs'),
        controlledByBundle('b2-uid', 'b2'),
        claimedWith(claimRef(BUNDLE_UID, 'b')),
        withOwner(userRef),
      );
      const plan = planFinalize(input(propagation, [theirs], { listings: listedBy(theirs) }));
      expect(summary(plan.steps)).toEqual(['withdraw:theirs']);
      expect(plan.done).toBe(false);
      const [step] = plan.steps;
      if (step?.action !== 'withdraw') throw new Error('expected a withdraw');
      expect(step.patch[0]).toEqual({ op: 'test', path: '/metadata/ownerReferences', value: theirs.metadata.ownerReferences });
      expect(patched(theirs, step.patch).metadata.ownerReferences?.map((r) => r.uid)).toEqual(['b2-uid', 'user-uid']);
    },
  );

  it('a released object keeps no Bundle reference that would not hold it (a stale claim of a Bundle that does not list it)', () => {
    const o = live(configMap('delay'), controlledByBundle(), delayed, claimedWith(claimRef('b3-uid', 'b3')), withOwner(userRef));
    const [step] = planFinalize(input('Background', [o])).steps;
    expect(step?.action).toBe('release');
    if (step?.action !== 'release') return;
    expect(patched(o, step.patch).metadata.ownerReferences).toEqual([userRef]);
  });

  // Fuzz seed 3041: b2 let the object go to b1 (b1's claim left alone on it), b2 was re-created listing it, and b1 was
  // deleted before it took the object; the collector then deleted it with b1 although b2 lists it.
  it.each<DeletionPropagation>(['Background', 'Foreground'])(
    '%s: an uncontrolled object carrying only its claim, listed by another live Bundle, is let go (nothing may delete it)',
    (propagation) => {
      const o = live(configMap('claimed'), claimedWith(claimRef(BUNDLE_UID, 'b')), withOwner(userRef));
      const plan = planFinalize(input(propagation, [o], { listings: listedBy(o), coordinates: new Set([keyOf(o)]) }));
      expect(summary(plan.steps)).toEqual(['let-go:claimed']);
      const [step] = plan.steps;
      if (step?.action !== 'let-go') throw new Error('expected a let-go');
      expect(step.patch[0]).toEqual({ op: 'test', path: '/metadata/ownerReferences', value: o.metadata.ownerReferences });
      expect(patched(o, step.patch).metadata.ownerReferences).toEqual([userRef]);
    },
  );

  it('background: an uncontrolled object carrying only its claim, listed by nobody else, goes as a controlled one would: released with its deletionDelay', () => {
    const o = live(configMap('claimed'), delayed, claimedWith(claimRef(BUNDLE_UID, 'b')));
    const [step] = planFinalize(input('Background', [o], { coordinates: new Set([keyOf(o)]) })).steps;
    expect(step?.action).toBe('release');
    if (step?.action !== 'release') return;
    const after = patched(o, step.patch);
    expect(after.metadata.ownerReferences).toEqual([]);
    expect(after.metadata.labels?.[Labels.formerBundle]).toBe('b');
    expect(after.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
  });

  it('orphaning, an uncontrolled object carrying the claim that the Bundle no longer lists gets one orphan step, no withdraw', () => {
    const o = live(configMap('dropped'), claimedWith(claimRef(BUNDLE_UID, 'b')));
    expect(summary(planFinalize(input('Orphan', [o])).steps)).toEqual(['orphan:dropped']);
  });

  it('an uncontrolled object carrying the claim, off the coordinates, that another live Bundle lists: let go to it (mark and all)', () => {
    const o = live(configMap('elsewhere'), claimedWith(claimRef(BUNDLE_UID, 'b')));
    const plan = planFinalize(input('Background', [o], { listings: listedBy(o) }));
    expect(summary(plan.steps)).toEqual(['let-go:elsewhere']);
    const [step] = plan.steps;
    if (step?.action !== 'let-go') throw new Error('expected a let-go');
    expect(patched(o, step.patch).metadata.annotations?.[Annotations.formerBundle]).toBe('b');
  });

  it('a stale claim on an object being deleted: nothing to do', () => {
    const o = live(
      configMap('going'),
      claimedWith(claimRef(BUNDLE_UID, 'b')),
      (x) => (x.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'),
    );
    expect(planFinalize(input('Background', [o])).steps).toEqual([]);
  });

  // Red team 21: the Bundle's spec dropped the object (and, invalid, planned no withdrawal); its controller was then
  // orphan-deleted. The claim is all that ties it to this Bundle, which no longer lists it: withdrawn, never deleted.
  it.each<DeletionPropagation>(['Background', 'Foreground'])(
    '%s: an uncontrolled object carrying its claim that the Bundle no longer lists: the claim is withdrawn, the object kept',
    (propagation) => {
      const o = live(configMap('dropped'), claimedWith(claimRef(BUNDLE_UID, 'b')));
      const plan = planFinalize(input(propagation, [o]));
      expect(summary(plan.steps)).toEqual(['withdraw:dropped']);
      const [step] = plan.steps;
      if (step?.action !== 'withdraw') throw new Error('expected a withdraw');
      expect(patched(o, step.patch).metadata.ownerReferences ?? []).toEqual([]);
    },
  );

  it("a claim on an object a Bundle controls that no longer lists it, with another lister: every operator reference goes, the lister's claim stays", () => {
    const o = live(
      configMap('stale'),
      controlledByBundle('b3-uid', 'b3'),
      claimedWith(claimRef(BUNDLE_UID, 'b')),
      claimedWith(claimRef('b2-uid', 'b2')),
      withOwner(userRef),
    );
    const plan = planFinalize(input('Background', [o], { listings: listedBy(o) }));
    expect(summary(plan.steps)).toEqual(['withdraw:stale']);
    const [step] = plan.steps;
    if (step?.action !== 'withdraw') throw new Error('expected a withdraw');
    expect(patched(o, step.patch).metadata.ownerReferences?.map((r) => r.uid)).toEqual(['b2-uid', 'user-uid']);
  });

  it("let go to a live Bundle that lists it: that Bundle's claim stays, until it takes the object", () => {
    const o = live(configMap('elsewhere'), controlledByBundle(), claimedWith(claimRef('b2-uid', 'b2')));
    const [step] = planFinalize(input('Background', [o], { listings: listedBy(o) })).steps;
    expect(step?.action).toBe('let-go');
    if (step?.action !== 'let-go') return;
    expect(patched(o, step.patch).metadata.ownerReferences?.map((r) => r.uid)).toEqual(['b2-uid']);
  });
});

describe('background: an object another owner also holds (red-team round three)', () => {
  const userOwner: OwnerReference = { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: 'parent-uid' };
  const plan = (o: Obj) =>
    planFinalize({
      propagation: 'Background',
      bundle: { name: 'b', uid: BUNDLE_UID },
      objects: [o],
      coordinates: new Set(),
      listings: new Map(),
      now: NOW,
      stampAt: NOW,
      signRelease: releaseSigner(new Uint8Array(32)),
    });
  it("only the Bundle's references go; the collector decides, as kube-controller-manager would", () => {
    const [step] = plan(live(configMap('x'), controlledByBundle(), withOwner(userOwner))).steps;
    expect(step?.action).toBe('disown');
    const patch = step?.action === 'disown' ? step.patch : [];
    expect(patch).toContainEqual({ op: 'replace', path: '/metadata/ownerReferences', value: [userOwner] });
  });
  it('an object with no other owner is deleted as before', () => {
    expect(plan(live(configMap('x'), controlledByBundle())).steps[0]?.action).toBe('delete');
  });
});
