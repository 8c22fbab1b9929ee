/**
 * The deletion model beside the delay (keep, approve, wait for the Bundle to
 * be Ready, Bundle-wide defaults): one table through decideSoftDelete, then
 * what the finalizer, the prune and the sweeper make of it.
 */
import type { DeletionDefaults } from '../../../src/api/spec-defaults.js';
import { Annotations, Labels } from '../../../src/api/names.js';
import { planFinalize } from '../../../src/core/bundle/finalize.js';
import { type FinalizeInput } from '../../../src/core/bundle/finalize-types.js';
import type { JsonPatchOperation } from '../../../src/core/bundle/objects.js';
import { planPrune } from '../../../src/core/bundle/prune.js';
import { approvalTime } from '../../../src/cli/approve.js';
import { decideSoftDelete, deletedAfterWords } from '../../../src/core/softdelete/decide.js';
import { decideReleasedSweep } from '../../../src/core/softdelete/sweep.js';
import { formatRfc3339 } from '../../../src/core/rfc3339.js';
import { checkReleaseProof, releaseSigner, signRelease } from '../../../src/core/softdelete/provenance.js';
import { readDeletionRules } from '../../../src/core/softdelete/rules.js';
import { BUNDLE_UID, NAMESPACE, configMap, controlledByBundle, live, withAnnotation, withUid, type Obj } from '../bundle/builders.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const HOUR = 3_600_000;
const iso = (ms: number): string => formatRfc3339(ms);
const A = Annotations;
const STAMP = iso(NOW - 2 * HOUR);

/** The expected action; `await:<gate>` for an await. */
type Row = [string, Record<string, string>, DeletionDefaults | undefined, boolean | undefined, string];

describe('decideSoftDelete with policies (out of spec)', () => {
  it.each<Row>([
    // Keep
    ['Orphan annotation', { [A.deletionPolicy]: 'Orphan' }, undefined, undefined, 'release'],
    ['Orphan default', {}, { deletionPolicy: 'Orphan' }, undefined, 'release'],
    [
      'Orphan with a delay and a stamp still releases',
      { [A.deletionPolicy]: 'Orphan', [A.deletionDelay]: '1h', [A.deletionTimestamp]: STAMP },
      undefined,
      undefined,
      'release',
    ],
    ['own Delete over Orphan default', { [A.deletionPolicy]: 'Delete' }, { deletionPolicy: 'Orphan' }, undefined, 'delete'],
    // Approve
    ['Approve, no delay, no stamp: stamped first', { [A.deletionPolicy]: 'Approve' }, undefined, undefined, 'mark'],
    [
      'Approve, stamped, no approval',
      { [A.deletionPolicy]: 'Approve', [A.deletionTimestamp]: STAMP },
      undefined,
      undefined,
      'await:Approval',
    ],
    [
      'Approve, approval after the stamp',
      { [A.deletionPolicy]: 'Approve', [A.deletionTimestamp]: STAMP, [A.deletionApproved]: iso(NOW - HOUR) },
      undefined,
      undefined,
      'expired',
    ],
    [
      'Approve, approval equal to the stamp never counts',
      { [A.deletionPolicy]: 'Approve', [A.deletionTimestamp]: STAMP, [A.deletionApproved]: STAMP },
      undefined,
      undefined,
      'await:Approval',
    ],
    [
      'Approve, approval before the stamp never counts',
      { [A.deletionPolicy]: 'Approve', [A.deletionTimestamp]: STAMP, [A.deletionApproved]: iso(NOW - 3 * HOUR) },
      undefined,
      undefined,
      'await:Approval',
    ],
    [
      'Approve, unreadable approval',
      { [A.deletionPolicy]: 'Approve', [A.deletionTimestamp]: STAMP, [A.deletionApproved]: 'yes' },
      undefined,
      undefined,
      'invalid',
    ],
    [
      'Approve, approved but the delay still runs',
      { [A.deletionPolicy]: 'Approve', [A.deletionDelay]: '3h', [A.deletionTimestamp]: STAMP, [A.deletionApproved]: iso(NOW - HOUR) },
      undefined,
      undefined,
      'wait',
    ],
    [
      'Approve by default, with a default delay, due',
      { [A.deletionTimestamp]: STAMP },
      { deletionPolicy: 'Approve', deletionDelay: '1h' },
      undefined,
      'await:Approval',
    ],
    [
      'Approve: the stamp without a delay is its zero delay, not an unknown one',
      { [A.deletionPolicy]: 'Approve', [A.deletionTimestamp]: STAMP, [A.deletionApproved]: iso(NOW) },
      undefined,
      undefined,
      'expired',
    ],
    // BundleReady
    [
      'BundleReady, Bundle not Ready',
      { [A.deleteWhen]: 'BundleReady', [A.deletionTimestamp]: STAMP },
      undefined,
      false,
      'await:BundleReady',
    ],
    [
      'BundleReady, readiness unknown: shut',
      { [A.deleteWhen]: 'BundleReady', [A.deletionTimestamp]: STAMP },
      undefined,
      undefined,
      'await:BundleReady',
    ],
    ['BundleReady, Bundle Ready', { [A.deleteWhen]: 'BundleReady', [A.deletionTimestamp]: STAMP }, undefined, true, 'expired'],
    [
      'BundleReady, Ready but the delay still runs',
      { [A.deleteWhen]: 'BundleReady', [A.deletionDelay]: '3h', [A.deletionTimestamp]: STAMP },
      undefined,
      true,
      'wait',
    ],
    ['BundleReady by default, no stamp: stamped first', {}, { deleteWhen: 'BundleReady' }, true, 'mark'],
    [
      'Approve and BundleReady: approval first',
      { [A.deletionPolicy]: 'Approve', [A.deleteWhen]: 'BundleReady', [A.deletionTimestamp]: STAMP },
      undefined,
      false,
      'await:Approval',
    ],
    [
      'Approve and BundleReady: approved, not Ready',
      { [A.deletionPolicy]: 'Approve', [A.deleteWhen]: 'BundleReady', [A.deletionTimestamp]: STAMP, [A.deletionApproved]: iso(NOW) },
      undefined,
      false,
      'await:BundleReady',
    ],
    // Defaults
    ['default delay, no stamp', {}, { deletionDelay: '1h' }, undefined, 'mark'],
    [
      'own delay over the default',
      { [A.deletionDelay]: '0s', [A.deletionTimestamp]: STAMP },
      { deletionDelay: '24h' },
      undefined,
      'expired',
    ],
    ['default delay still running', { [A.deletionTimestamp]: STAMP }, { deletionDelay: '24h' }, undefined, 'wait'],
    ['no defaults: as before', {}, {}, undefined, 'delete'],
    // Unreadable: kept
    ['unknown policy', { [A.deletionPolicy]: 'Sometimes' }, undefined, undefined, 'invalid'],
    ['unknown gate', { [A.deleteWhen]: 'Tuesday' }, undefined, undefined, 'invalid'],
    ['unreadable default delay', {}, { deletionDelay: 'banana' }, undefined, 'invalid'],
    [
      'an object with a bad policy and a default Orphan is still kept',
      { [A.deletionPolicy]: 'orphan' },
      { deletionPolicy: 'Orphan' },
      undefined,
      'invalid',
    ],
  ])('%s', (_name, annotations, defaults, bundleReady, want) => {
    const d = decideSoftDelete({ inSpec: false, annotations, now: NOW, defaults, ...(bundleReady !== undefined ? { bundleReady } : {}) });
    expect(d.action === 'await' ? `await:${d.waitingFor}` : d.action).toBe(want);
  });

  it('a countdown says what will still hold the object once its delay is over, and the words say it too', () => {
    const gatesOf = (annotations: Record<string, string>): unknown => {
      const d = decideSoftDelete({ inSpec: false, annotations, now: NOW });
      return d.action === 'mark' || d.action === 'wait' ? (d.gates ?? []) : d.action;
    };
    expect(gatesOf({ [A.deletionDelay]: '1h' })).toEqual([]);
    expect(gatesOf({ [A.deletionPolicy]: 'Approve' })).toEqual(['Approval']);
    expect(gatesOf({ [A.deleteWhen]: 'BundleReady', [A.deletionDelay]: '3h', [A.deletionTimestamp]: STAMP })).toEqual(['BundleReady']);
    expect(gatesOf({ [A.deletionPolicy]: 'Approve', [A.deleteWhen]: 'BundleReady' })).toEqual(['Approval', 'BundleReady']);
    expect(deletedAfterWords(STAMP)).toBe(`after ${STAMP}`);
    expect(deletedAfterWords(STAMP, ['Approval', 'BundleReady'])).toBe(
      `after ${STAMP}, once approved, once its Bundle's resources are Ready`,
    );
    const [marked] = planPrune({
      controlled: [live(configMap('a', controlledByBundle(), withUid('a-uid'), withAnnotation(A.deletionPolicy, 'Approve')))],
      inSpec: new Set(),
      now: NOW,
      bundleName: 'b',
    });
    expect(marked?.action === 'mark' ? marked.event.message : marked?.action).toBe(
      `ConfigMap ${NAMESPACE}/a will be deleted after ${iso(NOW)}, once approved`,
    );
  });

  it('in spec: an approval alone is cancelled too (it must not count for a later countdown)', () => {
    expect(decideSoftDelete({ inSpec: true, annotations: { [A.deletionApproved]: iso(NOW) }, now: NOW })).toEqual({ action: 'cancel' });
    expect(decideSoftDelete({ inSpec: true, annotations: { [A.deletionPolicy]: 'Approve' }, now: NOW })).toEqual({ action: 'keep' });
  });
});

describe('readDeletionRules', () => {
  it('says where a bad delay was written', () => {
    expect(readDeletionRules({}, { deletionDelay: '-1s' })).toEqual({
      ok: false,
      message: 'spec.deletionDefaults.deletionDelay "-1s" is negative',
    });
    expect(readDeletionRules({ [A.deletionDelay]: '' }, { deletionDelay: '1h' })).toEqual({
      ok: false,
      message: `annotation ${A.deletionDelay} is empty; expected a Go duration such as "24h"`,
    });
  });
});

describe('the sweeper: the Bundle is gone', () => {
  const released = (annotations: Record<string, string>) => ({ labels: { [Labels.formerBundle]: 'b' }, ownerReferences: [], annotations });
  it.each<[string, Record<string, string>, string]>([
    ['Orphan is kept', { [A.deletionPolicy]: 'Orphan', [A.deletionDelay]: '0s', [A.deletionTimestamp]: STAMP }, 'skip'],
    ['Approve waits for its approval', { [A.deletionPolicy]: 'Approve', [A.deletionDelay]: '0s', [A.deletionTimestamp]: STAMP }, 'await'],
    [
      'Approve, approved',
      { [A.deletionPolicy]: 'Approve', [A.deletionDelay]: '0s', [A.deletionTimestamp]: STAMP, [A.deletionApproved]: iso(NOW) },
      'expired',
    ],
    [
      'BundleReady: no replacement to wait for',
      { [A.deleteWhen]: 'BundleReady', [A.deletionDelay]: '0s', [A.deletionTimestamp]: STAMP },
      'expired',
    ],
  ])('%s', (_name, annotations, want) => {
    expect(decideReleasedSweep(released(annotations), NOW).action).toBe(want);
  });
});

describe('prune and finalize', () => {
  const KEY = new Uint8Array(32).fill(9);
  const obj = (name: string, annotations: Record<string, string> = {}): Obj =>
    live(
      configMap(name, controlledByBundle(), withUid(`${name}-uid`), ...Object.entries(annotations).map(([k, v]) => withAnnotation(k, v))),
    );
  const finalize = (objects: Obj[], defaults?: DeletionDefaults): ReturnType<typeof planFinalize> => {
    const input: FinalizeInput = {
      propagation: 'Background',
      bundle: { name: 'b', uid: BUNDLE_UID, defaults },
      objects,
      coordinates: new Set(),
      listings: new Map(),
      now: NOW,
      stampAt: NOW,
      signRelease: releaseSigner(KEY),
    };
    return planFinalize(input);
  };
  const adds = (patch: readonly JsonPatchOperation[]): Record<string, unknown> =>
    Object.fromEntries(patch.flatMap((op) => (op.op === 'add' || op.op === 'replace' ? [[op.path, op.value] as const] : [])));

  it('a live Bundle releases an Orphan object it dropped: its reference goes, the label says where it came from', () => {
    const [action] = planPrune({
      controlled: [obj('keep', { [A.deletionPolicy]: 'Orphan' })],
      inSpec: new Set(),
      now: NOW,
      bundleName: 'b',
    });
    expect(action?.action).toBe('release');
    if (action?.action !== 'release') return;
    expect(adds(action.patch)).toEqual({
      '/metadata/ownerReferences': [],
      '/metadata/labels': {},
      [`/metadata/labels/${Labels.formerBundle.replace('/', '~1')}`]: 'b',
      [`/metadata/annotations/${Annotations.formerBundle.replace('/', '~1')}`]: 'b',
    });
  });

  it('a deleted Bundle releases Orphan objects without a countdown, gated ones with one, and deletes the rest', () => {
    const plan = finalize([
      obj('plain'),
      obj('kept', { [A.deletionPolicy]: 'Orphan' }),
      obj('approve', { [A.deletionPolicy]: 'Approve' }),
      obj('gated', { [A.deleteWhen]: 'BundleReady' }),
    ]);
    const by = new Map(plan.steps.map((s) => [s.target.name, s]));
    expect(by.get('plain')?.action).toBe('delete');
    const kept = by.get('kept');
    expect(kept?.action).toBe('release');
    if (kept?.action === 'release') expect(JSON.stringify(kept.patch)).not.toContain(A.releaseProof.replace('/', '~1'));
    for (const name of ['approve', 'gated']) {
      const step = by.get(name);
      expect(step?.action).toBe('release');
      if (step?.action !== 'release') continue;
      const written = adds(step.patch);
      // A gate without a delay counts down from zero; the proof is over what the object then carries.
      expect(written[`/metadata/annotations/${A.deletionDelay.replace('/', '~1')}`]).toBe('0s');
      expect(written[`/metadata/annotations/${A.deletionTimestamp.replace('/', '~1')}`]).toBe(iso(NOW));
    }
  });

  it("the Bundle's defaults go with a released object, and its proof binds the policy", () => {
    const plan = finalize([obj('d')], { deletionDelay: '2h', deletionPolicy: 'Approve' });
    const step = plan.steps[0];
    expect(step?.action).toBe('release');
    if (step?.action !== 'release') return;
    const written = adds(step.patch);
    const annotations = {
      [A.deletionDelay]: written[`/metadata/annotations/${A.deletionDelay.replace('/', '~1')}`] as string,
      [A.deletionPolicy]: written[`/metadata/annotations/${A.deletionPolicy.replace('/', '~1')}`] as string,
      [A.deletionTimestamp]: written[`/metadata/annotations/${A.deletionTimestamp.replace('/', '~1')}`] as string,
      [A.releaseProof]: written[`/metadata/annotations/${A.releaseProof.replace('/', '~1')}`] as string,
    };
    expect(annotations[A.deletionDelay]).toBe('2h');
    expect(annotations[A.deletionPolicy]).toBe('Approve');
    const meta = { uid: 'd-uid', namespace: NAMESPACE, labels: { [Labels.formerBundle]: 'b' }, annotations };
    expect(checkReleaseProof(KEY, meta)).toEqual({ proven: true });
    // Taking the policy off (to skip the approval) breaks the proof: the sweeper keeps the object.
    const { [A.deletionPolicy]: _policy, ...rest } = annotations;
    const withoutPolicy = { ...meta, annotations: rest };
    expect(checkReleaseProof(KEY, withoutPolicy).proven).toBe(false);
  });

  it('Orphan from the defaults is written onto the released object, so the sweeper and pending read it from the object alone', () => {
    const policyPath = `/metadata/annotations/${A.deletionPolicy.replace('/', '~1')}`;
    const released = (patch: readonly JsonPatchOperation[], own: Record<string, string>) => ({
      labels: { [Labels.formerBundle]: 'b' },
      annotations: { ...own, [A.deletionPolicy]: adds(patch)[policyPath] as string },
      ownerReferences: [],
    });
    for (const own of [{}, { [A.deletionDelay]: '1h' }] as Record<string, string>[]) {
      const step = finalize([obj('d', own)], { deletionPolicy: 'Orphan' }).steps[0];
      expect(step?.action).toBe('release');
      if (step?.action !== 'release') continue;
      expect(adds(step.patch)[policyPath]).toBe('Orphan');
      expect(decideReleasedSweep(released(step.patch, own), NOW)).toEqual({ action: 'skip', reason: `${A.deletionPolicy} Orphan: kept` });
    }
    const [pruned] = planPrune({
      controlled: [obj('p')],
      inSpec: new Set(),
      now: NOW,
      bundleName: 'b',
      defaults: { deletionPolicy: 'Orphan' },
    });
    expect(pruned?.action).toBe('release');
    if (pruned?.action === 'release') expect(adds(pruned.patch)[policyPath]).toBe('Orphan');
  });

  it('a proof signed with no policy checks on an object without a policy, never on one with (v2 and v3)', () => {
    const facts = { uid: 'u', namespace: 'ns', formerBundle: 'b', deletionTimestamp: STAMP, deletionDelay: '1h', deletionPolicy: '' };
    const v2 = signRelease(KEY, facts, 'v2');
    const v3 = signRelease(KEY, facts);
    expect(v2.startsWith('v2:')).toBe(true);
    expect(v3.startsWith('v3:')).toBe(true);
    // A v1 proof is the same MAC without the policy field, made by the previous version.
    const meta = (proof: string, policy?: string) => ({
      uid: 'u',
      namespace: 'ns',
      labels: { [Labels.formerBundle]: 'b' },
      annotations: {
        [A.deletionDelay]: '1h',
        [A.deletionTimestamp]: STAMP,
        [A.releaseProof]: proof,
        ...(policy ? { [A.deletionPolicy]: policy } : {}),
      },
    });
    expect(checkReleaseProof(KEY, meta(v2)).proven).toBe(true);
    expect(checkReleaseProof(KEY, meta(v2, 'Approve')).proven).toBe(false);
    expect(checkReleaseProof(KEY, meta(v3)).proven).toBe(true);
    expect(checkReleaseProof(KEY, meta(v3, 'Approve')).proven).toBe(false);
  });

  it('approve writes a time after the stamp, whatever the clock says', () => {
    expect(approvalTime(NOW, NOW - HOUR)).toBe(iso(NOW + 1));
    expect(approvalTime(NOW, NOW + HOUR)).toBe(iso(NOW + HOUR));
  });
});

describe('foreground: Orphan and Approve objects are released from the cascade', () => {
  const KEY = new Uint8Array(32).fill(3);
  const obj = (name: string, annotations: Record<string, string> = {}): Obj =>
    live(
      configMap(name, controlledByBundle(), withUid(`${name}-uid`), ...Object.entries(annotations).map(([k, v]) => withAnnotation(k, v))),
    );
  it('the rest is left to the collector', () => {
    const plan = planFinalize({
      propagation: 'Foreground',
      bundle: { name: 'b', uid: BUNDLE_UID, defaults: { deletionPolicy: 'Approve' } },
      objects: [
        obj('plain', { [A.deletionPolicy]: 'Delete' }),
        obj('slow', { [A.deletionPolicy]: 'Delete', [A.deletionDelay]: '1h' }),
        obj('kept', { [A.deletionPolicy]: 'Orphan' }),
        obj('approve'),
      ],
      coordinates: new Set(),
      listings: new Map(),
      now: NOW,
      stampAt: NOW,
      signRelease: releaseSigner(KEY),
    });
    expect(plan.steps.map((s) => [s.target.name, s.action === 'leave' ? s.reason : s.action])).toEqual([
      ['plain', 'collector-deletes'],
      ['slow', 'collector-deletes'],
      ['kept', 'release'],
      ['approve', 'release'],
    ]);
    expect(plan.done).toBe(false);
  });
});
