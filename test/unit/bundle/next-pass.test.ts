import { Annotations } from '../../../src/api/names.js';
import { EXPIRY_WAKE_SLACK_MS, nextPass, type PassResult } from '../../../src/core/bundle/next-pass.js';
import { redecideDelete } from '../../../src/core/bundle/prune.js';
import type { ActionFailure } from '../../../src/core/bundle/status.js';
import type { ValidationIssue } from '../../../src/core/bundle/validate.js';
import {
  BUNDLE_UID,
  NOW,
  configMap,
  controlledBy,
  controlledByBundle,
  live,
  terminating,
  withAnnotation,
  withUid,
  type Obj,
} from './builders.js';

describe('nextPass: when the Bundle controller looks again', () => {
  const issue = (retriable: boolean): ValidationIssue => ({ retriable }) as ValidationIssue;
  const failures = (...f: ActionFailure[]): Map<string, ActionFailure> => new Map(f.map((x, i) => [`r${i}`, x]));
  const pass = (extra: Partial<PassResult> = {}, plan: PassResult['plan'] = { issues: [] }): PassResult => ({
    plan,
    applyFailures: new Map(),
    pruneFailures: [],
    wrote: false,
    ...extra,
  });

  it.each<[string, PassResult, ReturnType<typeof nextPass>]>([
    ['nothing written, nothing due: idle (watches bring it back)', pass(), { kind: 'idle' }],
    ['wrote: look again soon', pass({ wrote: true }), { kind: 'after', ms: 300 }],
    [
      'a countdown expires first (a little after, never before)',
      pass({ wrote: true }, { issues: [], requeueAfterMs: 120 }),
      { kind: 'after', ms: 120 + EXPIRY_WAKE_SLACK_MS },
    ],
    [
      'the time the pass took since planning is taken off the wait',
      pass({ sincePlannedMs: 80 }, { issues: [], requeueAfterMs: 120 }),
      { kind: 'after', ms: 40 + EXPIRY_WAKE_SLACK_MS },
    ],
    [
      'a fraction of a millisecond is waited in full',
      pass({ sincePlannedMs: 0.25 }, { issues: [], requeueAfterMs: 120 }),
      { kind: 'after', ms: 120 + EXPIRY_WAKE_SLACK_MS },
    ],
    [
      'a pass that took longer than the wait: at once (plus the slack)',
      pass({ sincePlannedMs: 500 }, { issues: [], requeueAfterMs: 120 }),
      { kind: 'after', ms: EXPIRY_WAKE_SLACK_MS },
    ],
    [
      'a countdown expires later than the recheck',
      pass({ wrote: true }, { issues: [], requeueAfterMs: 60_000 }),
      { kind: 'after', ms: 300 },
    ],
    ['only a countdown', pass({}, { issues: [], requeueAfterMs: 60_000 }), { kind: 'after', ms: 60_000 + EXPIRY_WAKE_SLACK_MS }],
    ['a retriable issue (a kind not served yet)', pass({}, { issues: [issue(true)] }), { kind: 'retry' }],
    ['a terminal issue alone: idle', pass({}, { issues: [issue(false)] }), { kind: 'idle' }],
    ['an apply failure a retry may fix', pass({ applyFailures: failures({ message: 'x' }) }), { kind: 'retry' }],
    ['only terminal apply failures: idle', pass({ applyFailures: failures({ message: 'x', terminal: true }) }), { kind: 'idle' }],
    ['a prune failure', pass({ pruneFailures: [{}] }), { kind: 'retry' }],
  ])('%s', (_name, result, expected) => {
    expect(nextPass(result, 300)).toEqual(expected);
  });
});

describe('redecideDelete: the prune rules again on a fresh read', () => {
  const target = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns1', name: 'a', uid: 'a-uid', resourceVersion: '1' };
  const ours = (...mods: ((o: Obj) => void)[]): Obj =>
    live(configMap('a'), controlledByBundle(), (o) => (o.metadata.resourceVersion = '9'), ...mods);
  const expired = [withAnnotation(Annotations.deletionDelay, '1m'), withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:00:00Z')];
  const counting = [withAnnotation(Annotations.deletionDelay, '1h'), withAnnotation(Annotations.deletionTimestamp, '2025-12-31T23:30:00Z')];

  it.each<[string, Obj | undefined, string | undefined]>([
    ['the same object, ours, no delay: delete at the fresh resourceVersion', ours(), '9'],
    ['countdown expired: delete', ours(...expired), '9'],
    ['countdown still running (someone re-stamped it): keep', ours(...counting), undefined],
    ['a delay but no stamp (someone put it back): keep', ours(withAnnotation(Annotations.deletionDelay, '1h')), undefined],
    ['an unreadable delay: keep', ours(withAnnotation(Annotations.deletionDelay, 'soon')), undefined],
    ['gone', undefined, undefined],
    ['another object under the same name (new UID): keep', ours(withUid('other-uid')), undefined],
    ['being deleted already: nothing to do', ours(terminating()), undefined],
    ['no longer ours (handed over, released): keep', live(configMap('a'), controlledBy('ReplicaSet', 'rs')), undefined],
    ['uncontrolled: keep', live(configMap('a')), undefined],
  ])('%s', (_name, fresh, expected) => {
    expect(redecideDelete({ fresh, target, bundleUid: BUNDLE_UID, now: NOW })).toBe(expected);
  });
});
