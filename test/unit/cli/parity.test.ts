/**
 * One table of situations, run through the plan the controller carries out
 * and through what `bundlesmith diff` and `pending` print: both must say the
 * same thing (issue 10). Each row names what the operator does to one
 * object (read off the plan the way controller.ts acts on it) and the word
 * the CLI prints for it. Rows that must not delete also assert that nothing
 * in the plan deletes or stamps the object.
 */
import type { Resource } from '../../../src/api/resource.js';
import { API_VERSION, Annotations, BUNDLE_KIND, Labels } from '../../../src/api/names.js';
import { describePlan, type DiffAction } from '../../../src/cli/describe-plan.js';
import { pendingOfPlan, releasedEntry } from '../../../src/cli/pending-list.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import { objectKey } from '../../../src/core/bundle/objects.js';
import { listingsByObject, type BundleLike } from '../../../src/core/bundle/ownership.js';
import { buildPlanInput, type PlanSources } from '../../../src/core/bundle/plan-input.js';
import { planBundle, type BundlePlan, type PlanInput } from '../../../src/core/bundle/plan.js';
import { buildBundleStatus } from '../../../src/core/bundle/status.js';
import { pendingDeletionOf } from '../../../src/core/softdelete/decide.js';
import { decideReleasedSweep } from '../../../src/core/softdelete/sweep.js';
import { formatRfc3339 } from '../../../src/core/rfc3339.js';
import {
  BUNDLE_UID,
  KINDS,
  NAMESPACE,
  NOW,
  configMap,
  controlledBy,
  controlledByBundle,
  live,
  resource,
  terminating,
  withAnnotation,
  withOwner,
  type Mod,
  type Obj,
} from '../bundle/builders.js';

const SELF_CREATED = '2025-06-01T00:00:00Z';
const OLDER = '2024-01-01T00:00:00Z';
const HOUR = 3_600_000;

const delay = (d: string): Mod<Obj> => withAnnotation(Annotations.deletionDelay, d);
const stamp = (msBeforeNow: number): Mod<Obj> => withAnnotation(Annotations.deletionTimestamp, formatRfc3339(NOW - msBeforeNow));
const released: Mod<Obj> = (o) => {
  o.metadata.labels = { ...o.metadata.labels, [Labels.formerBundle]: 'gone' };
};
const byOtherBundle: Mod<Obj> = withOwner({
  apiVersion: API_VERSION,
  kind: BUNDLE_KIND,
  name: 'other',
  uid: 'other-uid',
  controller: true,
  blockOwnerDeletion: true,
});

/** Another live Bundle of the namespace, listing the given ConfigMaps. */
function otherBundle(lists: string[], creationTimestamp = OLDER): BundleLike {
  return {
    metadata: { name: 'other', namespace: NAMESPACE, uid: 'other-uid', creationTimestamp },
    spec: { resources: lists.map((n) => ({ name: n, spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } } } })) },
  };
}

/** A spec that fails the controller's checks (a cluster-scoped kind), whatever else it lists. */
const invalidResource = resource('ns', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });

interface Situation {
  /** The Bundle's spec: the ConfigMaps it lists, plus extra resources. */
  lists: string[];
  extra?: Resource[];
  /** Live objects as read (at the spec's coordinates, controlled, or unrelated). */
  objects: Obj[];
  bundles?: BundleLike[];
}

function sources(s: Situation): PlanSources {
  const resources = [...s.lists.map((n) => resource(n, configMap(n))), ...(s.extra ?? [])];
  const self: BundleLike = {
    metadata: { name: 'b', namespace: NAMESPACE, uid: BUNDLE_UID, creationTimestamp: SELF_CREATED },
    spec: { resources },
  };
  return {
    bundle: {
      metadata: { name: 'b', namespace: NAMESPACE, uid: BUNDLE_UID, generation: 1, creationTimestamp: SELF_CREATED },
      spec: { resources },
    },
    kinds: KINDS,
    crdReadiness: new Map(),
    objects: s.objects,
    bundles: [self, ...(s.bundles ?? [])],
    now: NOW,
    stampAt: NOW + 1000,
  };
}

/**
 * What the controller does to ConfigMap `name`, in the order it acts:
 * claims (patches), then, unless the spec is invalid, the resource's apply
 * (sent only when needed) and the prune actions; held-back prunes write nothing.
 */
function operatorEffects(plan: BundlePlan, name: string): string[] {
  const out: string[] = [];
  const claim = plan.takeHolds.find((c) => c.target.name === name);
  if (claim) out.push(`claim:${claim.kind}`);
  if (plan.issues.length === 0) {
    const rp = plan.resources.find((r) => r.name === name);
    if (rp?.action === 'apply') out.push(rp.apply.needed ? (rp.apply.create ? 'create' : 'apply') : 'nothing');
    else if (rp !== undefined) out.push(rp.action);
  }
  for (const a of plan.prune.filter((p) => p.target.name === name))
    out.push(a.action === 'delete' && a.afterDelay ? 'delete-after-delay' : a.action);
  for (const w of plan.withheld.filter((x) => x.action.target.name === name)) out.push(`held:${w.action.action}`);
  return out;
}

const x = (...mods: Mod<Obj>[]): Obj => live(configMap('x'), ...mods);
const y = (...mods: Mod<Obj>[]): Obj => live(configMap('y'), ...mods);
const mine = controlledByBundle();

/** 'none': the CLI prints nothing for the object, as the operator does nothing to it. */
type Row = [string, Situation, string[], DiffAction | 'none'];

const table: Row[] = [
  // The object is in the spec.
  ['listed, absent', { lists: ['x'], objects: [] }, ['create'], 'create'],
  ['listed, ours', { lists: ['x'], objects: [x(mine)] }, ['apply'], 'change'],
  [
    'listed, ours, countdown running (listed again)',
    { lists: ['x'], objects: [x(mine, delay('1h'), stamp(HOUR / 2))] },
    ['claim:cancel', 'apply'],
    'cancel-deletion',
  ],
  ['listed, orphan', { lists: ['x'], objects: [x()] }, ['adopt'], 'adopt'],
  [
    'listed, released and counting down',
    { lists: ['x'], objects: [x(released, delay('1h'), stamp(HOUR / 2))] },
    ['claim:adopt', 'apply'],
    'adopt',
  ],
  ['listed, orphan, an older Bundle lists it too', { lists: ['x'], objects: [x()], bundles: [otherBundle(['x'])] }, ['conflict'], 'refuse'],
  [
    'listed, controlled by another Bundle that lists it',
    { lists: ['x'], objects: [x(byOtherBundle)], bundles: [otherBundle(['x'], '2026-01-01T00:00:00Z')] },
    ['claim:reference', 'conflict'],
    'refuse',
  ],
  [
    'listed, controlled by another Bundle that no longer lists it',
    { lists: ['x'], objects: [x(byOtherBundle)], bundles: [otherBundle([])] },
    ['claim:hand-over', 'apply'],
    'hand-over',
  ],
  [
    'listed, counting down in another Bundle that dropped it',
    { lists: ['x'], objects: [x(byOtherBundle, delay('1h'), stamp(HOUR / 2))], bundles: [otherBundle([])] },
    ['claim:hand-over', 'apply'],
    'hand-over',
  ],
  ['listed, controlled by a Deployment', { lists: ['x'], objects: [x(controlledBy('Deployment', 'web'))] }, ['conflict'], 'refuse'],
  ['listed, being deleted by the API server', { lists: ['x'], objects: [x(mine, terminating())] }, ['wait-deleting'], 'wait-deleting'],
  [
    'listed, spec invalid, ours and counting down',
    { lists: ['x'], extra: [invalidResource], objects: [x(mine, delay('1h'), stamp(HOUR / 2))] },
    ['claim:cancel'],
    'cancel-deletion',
  ],
  ['listed, spec invalid, absent', { lists: ['x'], extra: [invalidResource], objects: [] }, [], 'blocked'],

  // The object left the spec (the Bundle lists y instead).
  ['dropped, no delay', { lists: ['y'], objects: [y(mine), x(mine)] }, ['delete'], 'delete'],
  ['dropped, valid delay, no stamp', { lists: ['y'], objects: [y(mine), x(mine, delay('1h'))] }, ['mark'], 'soft-delete'],
  [
    'dropped, valid delay, stamp not due',
    { lists: ['y'], objects: [y(mine), x(mine, delay('1h'), stamp(HOUR / 2))] },
    ['wait'],
    'soft-delete',
  ],
  [
    'dropped, valid delay, stamp due',
    { lists: ['y'], objects: [y(mine), x(mine, delay('1h'), stamp(2 * HOUR))] },
    ['delete-after-delay'],
    'delete',
  ],
  ['dropped, invalid delay (banana), no stamp', { lists: ['y'], objects: [y(mine), x(mine, delay('banana'))] }, ['invalid'], 'keep'],
  [
    'dropped, invalid delay, stamped and long due',
    { lists: ['y'], objects: [y(mine), x(mine, delay('banana'), stamp(100 * HOUR))] },
    ['invalid'],
    'keep',
  ],
  ['dropped, empty delay', { lists: ['y'], objects: [y(mine), x(mine, delay(''))] }, ['invalid'], 'keep'],
  ['dropped, stamp without a delay', { lists: ['y'], objects: [y(mine), x(mine, stamp(100 * HOUR))] }, ['invalid'], 'keep'],
  [
    'dropped, listed by another live Bundle',
    { lists: ['y'], objects: [y(mine), x(mine)], bundles: [otherBundle(['x'], '2026-01-01T00:00:00Z')] },
    ['listed-elsewhere'],
    'listed-elsewhere',
  ],
  [
    'dropped, counting down, listed by another live Bundle',
    { lists: ['y'], objects: [y(mine), x(mine, delay('1h'), stamp(2 * HOUR))], bundles: [otherBundle(['x'])] },
    ['listed-elsewhere'],
    'listed-elsewhere',
  ],
  [
    'dropped, being deleted by the API server',
    { lists: ['y'], objects: [y(mine), x(mine, terminating())] },
    ['terminating'],
    'terminating',
  ],
  [
    'an object of another namespace naming the Bundle as controller',
    { lists: ['y'], objects: [y(mine), x(mine, (o) => (o.metadata.namespace = 'elsewhere'))] },
    [],
    'none',
  ],
  ['dropped, no delay, spec invalid', { lists: ['y'], extra: [invalidResource], objects: [y(mine), x(mine)] }, [], 'keep'],
  [
    'dropped, due, spec invalid',
    { lists: ['y'], extra: [invalidResource], objects: [y(mine), x(mine, delay('1h'), stamp(2 * HOUR))] },
    [],
    'keep',
  ],
  [
    'dropped, no delay, another resource refused',
    { lists: ['y'], objects: [y(controlledBy('Deployment', 'web')), x(mine)] },
    ['held:delete'],
    'held',
  ],
  [
    'dropped, due, another resource refused',
    { lists: ['y'], objects: [y(controlledBy('Deployment', 'web')), x(mine, delay('1h'), stamp(2 * HOUR))] },
    ['held:delete'],
    'held',
  ],
];

/** Effects that delete the object or start its countdown. */
const DESTRUCTIVE = new Set(['delete', 'delete-after-delay', 'mark']);

describe("the controller's kept listings plan as the listings computed per pass", () => {
  it.each(table)('%s', (_name, situation) => {
    const computed = sources(situation);
    // The controller keeps listingsByObject over the namespace's stored Bundles (this one's stored version included).
    const kept = { ...computed, bundles: [], listings: listingsByObject(computed.bundles) };
    expect(planBundle(buildPlanInput(kept))).toEqual(planBundle(buildPlanInput(computed)));
  });
});

describe('the CLI says what the operator does (one table, both paths)', () => {
  it.each(table)('%s', (_name, situation, effects, cliAction) => {
    const input: PlanInput = buildPlanInput(sources(situation));
    const plan = planBundle(input);

    // The controller's side: what it carries out for x.
    const done = operatorEffects(plan, 'x');
    expect(done).toEqual(effects);
    if (!effects.some((e) => DESTRUCTIVE.has(e))) {
      expect(plan.prune.filter((a) => a.target.name === 'x' && (a.action === 'delete' || a.action === 'mark'))).toEqual([]);
    }

    // bundlesmith diff: one entry for x, with the operator's action.
    const entries = describePlan(input, plan).filter((e) => e.kind === 'ConfigMap' && e.name === 'x');
    expect(entries.map((e) => e.action)).toEqual(cliAction === 'none' ? [] : [cliAction]);

    // bundlesmith pending: exactly the Bundle status's pendingDeletions have a time; other stamped objects are listed as kept, with why.
    const pending = pendingOfPlan(input, plan);
    const status = buildBundleStatus(plan, {}, undefined, formatRfc3339(NOW));
    expect(
      pending
        .filter((p) => p.deleteAfter !== undefined)
        .map((p) => ({
          apiVersion: p.apiVersion,
          kind: p.kind,
          name: p.name,
          deletionTimestamp: p.deletionTimestamp,
          deleteAfter: p.deleteAfter,
          ...(p.waitingFor !== undefined ? { waitingFor: p.waitingFor } : {}),
        })),
    ).toEqual(status.pendingDeletions);
    const liveX = input.controlled.find((o) => o.metadata.name === 'x');
    const countingDown = effects.some((e) => e === 'mark' || e === 'wait' || e === 'delete-after-delay');
    const forX = pending.filter((p) => p.name === 'x');
    const shown = forX.map((p) => [typeof p.deleteAfter, typeof p.problem]);
    if (countingDown) expect(shown).toEqual([['string', 'undefined']]);
    else if (liveX?.metadata.annotations?.[Annotations.deletionTimestamp] !== undefined && liveX.metadata.deletionTimestamp === undefined)
      expect(shown).toEqual([['undefined', 'string']]);
    else expect(shown).toEqual([]);
  });

  it('the diff says when: the countdown a soft delete starts is the one the plan writes', () => {
    const input = buildPlanInput(sources({ lists: ['y'], objects: [y(mine), x(mine, delay('1h'))] }));
    const plan = planBundle(input);
    const mark = plan.prune.find((a) => a.action === 'mark');
    expect(describePlan(input, plan).find((e) => e.name === 'x')).toMatchObject({
      action: 'soft-delete',
      deletionTimestamp: mark?.action === 'mark' ? mark.deletionTimestamp : 'none',
      deleteAfter: formatRfc3339(NOW + 1000 + HOUR),
    });
  });

  it('the keep entry carries the reason the operator reports', () => {
    const input = buildPlanInput(sources({ lists: ['y'], objects: [y(mine), x(mine, delay('banana'))] }));
    const entry = describePlan(input, planBundle(input)).find((e) => e.name === 'x');
    expect(entry?.detail).toContain('"banana" is not a Go duration');
  });
});

describe('released objects: pending says what the sweep does', () => {
  const rel = (...mods: Mod<Obj>[]): LiveObject => live(configMap('x'), released, ...mods);
  const noBundles = new Map<string, never>();
  it.each<[string, LiveObject, boolean]>([
    ['counting down', rel(delay('1h'), stamp(HOUR / 2)), true],
    ['due', rel(delay('1h'), stamp(2 * HOUR)), true],
    ['delay, not stamped yet', rel(delay('1h')), true],
    ['invalid delay', rel(delay('banana'), stamp(HOUR / 2)), false],
    ['stamp without a delay', rel(stamp(HOUR / 2)), false],
  ])('%s', (_name, o, deleted) => {
    const entry = releasedEntry(o, noBundles, NOW, NOW + 1000);
    const sweep = decideReleasedSweep(o.metadata, NOW, NOW + 1000);
    expect(entry?.deleteAfter).toEqual(sweep.action === 'skip' ? undefined : pendingDeletionOf(sweep)?.deleteAfter);
    expect(entry?.deleteAfter !== undefined).toBe(deleted);
    if (!deleted) expect(entry?.problem).toEqual(expect.any(String));
  });

  it('a released object a live Bundle lists is taken hold of (or its countdown cancelled), not swept', () => {
    const o = rel(delay('1h'), stamp(2 * HOUR));
    const claims = listingsByObject([otherBundle(['x'])]);
    expect(claims.has(objectKey(o))).toBe(true);
    const entry = releasedEntry(o, claims, NOW, NOW);
    expect(entry).toMatchObject({ problem: 'Bundle other lists it: the operator takes hold of it or cancels its countdown' });
    expect(entry).not.toHaveProperty('deleteAfter');
  });

  it('against its release record, as the sweep reads it: another release recorded keeps it; a cancelled one counts down anew', () => {
    const o = rel(delay('1h'), stamp(2 * HOUR), withAnnotation(Annotations.releaseProof, 'v2:current'));
    expect(releasedEntry(o, noBundles, NOW, NOW, { state: 'signed', proof: 'v2:current' })?.deleteAfter).toBe(formatRfc3339(NOW - HOUR));
    expect(releasedEntry(o, noBundles, NOW, NOW, { state: 'signed', proof: 'v2:later' })?.problem).toContain('kept');
    const cancelled = releasedEntry(o, noBundles, NOW, NOW + 1000, { state: 'cancelled', proof: 'v2:current' });
    expect(cancelled?.deleteAfter).toBe(formatRfc3339(NOW + 1000 + HOUR));
  });

  it('a release signed with a record (v3) whose record is gone is kept; where records cannot be read, shown as it reads', () => {
    const o = rel(delay('1h'), stamp(2 * HOUR), withAnnotation(Annotations.releaseProof, 'v3:current'));
    expect(releasedEntry(o, noBundles, NOW, NOW)?.problem).toContain('release record is gone: kept');
    expect(releasedEntry(o, noBundles, NOW, NOW, 'unread')?.deleteAfter).toBe(formatRfc3339(NOW - HOUR));
    // One signed before records (v2) counts without one, as the sweep reads it.
    const before = rel(delay('1h'), stamp(2 * HOUR), withAnnotation(Annotations.releaseProof, 'v2:current'));
    expect(releasedEntry(before, noBundles, NOW, NOW)?.deleteAfter).toBe(formatRfc3339(NOW - HOUR));
  });

  it('an object adopted since (a controller again) is not released', () => {
    expect(releasedEntry(rel(mine, delay('1h'), stamp(HOUR)), noBundles, NOW, NOW)).toBeUndefined();
  });
});
