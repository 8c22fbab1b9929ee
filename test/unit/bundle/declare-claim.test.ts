/**
 * The manifest's deletion rules reach the live object before anything else
 * in a pass (red team 3: an Orphan added to the manifest of a resource
 * Blocked behind a dependency was not applied, so the chart's deletion
 * guard let kube-controller-manager delete it in a foreground cascade).
 */
import { describe, expect, it } from '@jest/globals';
import { Annotations } from '../../../src/api/names.js';
import { declaredIdentityOf } from '../../../src/core/bundle/countdown-record.js';
import { planBundle } from '../../../src/core/bundle/plan.js';
import { stampSeal } from '../../../src/core/softdelete/stamp-seal.js';
import {
  bundle,
  configMap,
  controlledByBundle,
  deployment,
  live,
  planInput,
  resource,
  withAnnotation,
  withRef,
  withResource,
  withUid,
} from './builders.js';

const seal = stampSeal(new Uint8Array(32).fill(5));
const ORPHAN = { [Annotations.deletionPolicy]: 'Orphan' };

function keepOrphan(): ReturnType<typeof configMap> {
  return configMap('keep', withAnnotation(Annotations.deletionPolicy, 'Orphan'));
}

describe("declare: the manifest's deletion rules, sealed, written onto the object at once", () => {
  const b = bundle('b', withResource(resource('web', deployment('web'))), withResource(resource('keep', keepOrphan(), withRef('web'))));
  const liveKeep = live(configMap('keep'), controlledByBundle(), withUid('keep-uid'), withAnnotation('other', 'x'));

  it('a resource Blocked behind a dependency gets its declared-rules proof, guarded by uid', () => {
    const plan = planBundle(planInput(b, { keep: liveKeep }, { stampSeal: seal }));
    expect(plan.resources.find((r) => r.name === 'keep')?.action).toBe('blocked');
    const proof = seal.sealDeclared(declaredIdentityOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep' } }, 'ns1'), ORPHAN);
    expect(plan.takeHolds).toEqual([
      expect.objectContaining({
        name: 'keep',
        kind: 'declare',
        patch: [{ op: 'test', path: '/metadata/uid', value: 'keep-uid' }, expect.objectContaining({ op: 'add', value: proof })],
      }),
    ]);
    // The proof's policy is readable in clear by the deletion guard.
    expect(proof?.split(':')[2]).toBe('Orphan');
  });

  it('nothing when the object carries the proof already, or without the key (the CLI); rules that cannot be read are sealed too, for the guard', () => {
    const proof =
      seal.sealDeclared(declaredIdentityOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'keep' } }, 'ns1'), ORPHAN) ?? '';
    expect(
      planBundle(planInput(b, { keep: live(liveKeep, withAnnotation(Annotations.declaredRules, proof)) }, { stampSeal: seal })).takeHolds,
    ).toEqual([]);
    expect(planBundle(planInput(b, { keep: liveKeep })).takeHolds).toEqual([]);
    const bad = bundle(
      'b',
      withResource(
        resource(
          'keep',
          configMap('keep', withAnnotation(Annotations.deletionDelay, 'soon'), withAnnotation(Annotations.deletionPolicy, 'Orphan')),
        ),
      ),
    );
    const sealed = planBundle(planInput(bad, { keep: liveKeep }, { stampSeal: seal })).takeHolds[0]?.patch.find((op) => op.op === 'add');
    expect(sealed !== undefined && sealed.op === 'add' ? String(sealed.value).split(':').slice(0, 4) : undefined).toEqual([
      'd1',
      'soon',
      'Orphan',
      '-',
    ]);
  });

  it('rides along with a cancel', () => {
    const counting = live(liveKeep, withAnnotation(Annotations.deletionTimestamp, '2026-01-01T00:00:00Z'));
    const claim = planBundle(planInput(b, { keep: counting }, { stampSeal: seal })).takeHolds[0];
    expect(claim?.kind).toBe('cancel');
    expect(claim?.patch.some((op) => op.op === 'add' && op.path.endsWith('declared-rules'))).toBe(true);
  });
});

describe("a keeping policy from the Bundle's defaults is sealed too (red team 7)", () => {
  it('the proof of a manifest that declares nothing, under deletionDefaults Orphan, carries Orphan', () => {
    const b = bundle('b', withResource(resource('plain', configMap('plain'))));
    const withDefaults = { ...b, spec: { ...b.spec, deletionDefaults: { deletionPolicy: 'Orphan' as const } } };
    const plainLive = live(configMap('plain'), controlledByBundle(), withUid('plain-uid'), withAnnotation('other', 'x'));
    const claim = planBundle(planInput(withDefaults, { plain: plainLive }, { stampSeal: seal })).takeHolds[0];
    expect(claim?.kind).toBe('declare');
    const written = claim?.patch.find((op) => op.op === 'add');
    expect(written !== undefined && written.op === 'add' ? String(written.value).split(':')[2] : undefined).toBe('Orphan');
    // Without a keeping default there is nothing to seal.
    expect(planBundle(planInput(b, { plain: plainLive }, { stampSeal: seal })).takeHolds).toEqual([]);
  });
});
