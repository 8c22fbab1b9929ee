import { describe, expect, it } from '@jest/globals';
import { formerBundleLabelValue, formerBundleOf, LABEL_VALUE_MAX } from '../../../src/core/softdelete/former-bundle.js';
import { Annotations, Labels } from '../../../src/api/names.js';

/** Kubernetes' label value validation (apimachinery IsValidLabelValue). */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

describe('former-bundle: every Bundle name the API accepts gives a valid label value', () => {
  const names = ['b', 'a'.repeat(63), 'a'.repeat(64), `${'x'.repeat(51)}.-y${'z'.repeat(200)}`, `${'team-a.'.repeat(36)}b`.slice(0, 253)];
  it.each(names.map((n): [number, string] => [n.length, n]))('a name of %i characters', (_len, name) => {
    const value = formerBundleLabelValue(name);
    expect(value.length).toBeLessThanOrEqual(LABEL_VALUE_MAX);
    expect(value).toMatch(LABEL_VALUE);
    if (name.length <= LABEL_VALUE_MAX) expect(value).toBe(name);
  });
  it('long names that share a prefix get different values', () => {
    const prefix = 'p'.repeat(60);
    expect(formerBundleLabelValue(`${prefix}-one`)).not.toBe(formerBundleLabelValue(`${prefix}-two`));
  });
  it('the whole name is read from the annotation, else from a label written before it', () => {
    expect(
      formerBundleOf({ labels: { [Labels.formerBundle]: 'short' }, annotations: { [Annotations.formerBundle]: 'the-whole-name' } }),
    ).toBe('the-whole-name');
    expect(formerBundleOf({ labels: { [Labels.formerBundle]: 'short' } })).toBe('short');
    expect(formerBundleOf({})).toBeUndefined();
  });
});
