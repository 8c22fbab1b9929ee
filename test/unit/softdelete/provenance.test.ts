import { Annotations, Labels } from '../../../src/api/names.js';
import { checkReleaseProof, releaseFactsOf, signRelease, type ReleasedMeta } from '../../../src/core/softdelete/provenance.js';

const KEY = new Uint8Array(32).fill(1);
const released: ReleasedMeta = {
  uid: 'uid-1',
  namespace: 'team-a',
  labels: { [Labels.formerBundle]: 'web' },
  annotations: { [Annotations.deletionDelay]: '1h', [Annotations.deletionTimestamp]: '2026-01-01T00:00:00Z' },
};
function signed(meta: ReleasedMeta, key = KEY): ReleasedMeta {
  const facts = releaseFactsOf(meta);
  if (facts === undefined) throw new Error('not a release');
  return { ...meta, annotations: { ...meta.annotations, [Annotations.releaseProof]: signRelease(key, facts) } };
}
const withAnnotation = (meta: ReleasedMeta, key: string, value: string): ReleasedMeta => ({
  ...meta,
  annotations: { ...meta.annotations, [key]: value },
});

describe('release proofs', () => {
  it('a release signed with the key checks', () => {
    expect(checkReleaseProof(KEY, signed(released))).toEqual({ proven: true });
  });

  it.each<[string, (m: ReleasedMeta) => ReleasedMeta]>([
    ['no proof (a label and annotations written by hand)', (m) => m],
    ['another key', (m) => signed(m, new Uint8Array(32).fill(2))],
    ['copied onto another object (uid)', (m) => ({ ...signed(m), uid: 'uid-2' })],
    ['moved to another namespace', (m) => ({ ...signed(m), namespace: 'team-b' })],
    [
      'another former Bundle',
      (m) => {
        const s = signed(m);
        return { ...s, labels: { [Labels.formerBundle]: 'db' } };
      },
    ],
    ['an earlier stamp', (m) => withAnnotation(signed(m), Annotations.deletionTimestamp, '2020-01-01T00:00:00Z')],
    ['a shorter delay', (m) => withAnnotation(signed(m), Annotations.deletionDelay, '1s')],
    ['an unknown version', (m) => withAnnotation(m, Annotations.releaseProof, 'v2:abc')],
    ['garbage', (m) => withAnnotation(m, Annotations.releaseProof, 'v1:%%%')],
    ['empty', (m) => withAnnotation(m, Annotations.releaseProof, '')],
    ['no former-bundle label', (m) => ({ ...signed(m), labels: {} })],
    [
      'no delay',
      (m) => {
        const s = signed(m);
        const { [Annotations.deletionDelay]: _gone, ...rest } = s.annotations ?? {};
        return { ...s, annotations: rest };
      },
    ],
  ])('does not check: %s', (_name, change) => {
    const check = checkReleaseProof(KEY, change(released));
    expect(check.proven).toBe(false);
    if (!check.proven) expect(check.reason).not.toBe('');
  });

  it('fields cannot run into each other (the encoding is unambiguous)', () => {
    const a = releaseFactsOf({ ...released, labels: { [Labels.formerBundle]: 'a' }, namespace: 'bc' });
    const b = releaseFactsOf({ ...released, labels: { [Labels.formerBundle]: 'ab' }, namespace: 'c' });
    if (a === undefined || b === undefined) throw new Error('facts');
    expect(signRelease(KEY, a)).not.toBe(signRelease(KEY, b));
  });
});
