/** Label selectors for --bundle-selector: the string syntax Kubernetes accepts, matched as the API server matches it. */
import { matchesSelector, parseLabelSelector } from '../../src/core/selector.js';

const match = (selector: string, labels: Record<string, string>): boolean => {
  const parsed = parseLabelSelector(selector);
  if (!parsed.ok) throw new Error(parsed.error);
  return matchesSelector(parsed.selector, labels);
};

describe('parseLabelSelector / matchesSelector', () => {
  it.each<[string, Record<string, string>, boolean]>([
    ['shard=a', { shard: 'a' }, true],
    ['shard=a', { shard: 'b' }, false],
    ['shard=a', {}, false],
    ['shard==a', { shard: 'a' }, true],
    ['shard!=a', { shard: 'b' }, true],
    ['shard!=a', {}, true],
    ['shard!=a', { shard: 'a' }, false],
    ['shard in (a, b)', { shard: 'b' }, true],
    ['shard in (a,b)', { shard: 'c' }, false],
    ['shard notin (a,b)', { shard: 'c' }, true],
    ['shard notin (a,b)', {}, true],
    ['shard notin (a,b)', { shard: 'a' }, false],
    ['shard', { shard: '' }, true],
    ['shard', {}, false],
    ['!shard', {}, true],
    ['!shard', { shard: 'a' }, false],
    ['sharding.fluxcd.io/key in (shard1),tier=web', { 'sharding.fluxcd.io/key': 'shard1', tier: 'web' }, true],
    ['sharding.fluxcd.io/key in (shard1),tier=web', { 'sharding.fluxcd.io/key': 'shard1' }, false],
    ['!sharding.fluxcd.io/key', { tier: 'web' }, true],
    ['toString', {}, false],
  ])('%s on %j: %s', (selector, labels, want) => {
    expect(match(selector, labels)).toBe(want);
  });

  it.each(['', ',', 'a=b,', 'shard in (a', 'shard in a)', 'shard=a b', 'bad key!=x', 'k=-bad-', '!'])(
    'refuses %j with a message',
    (text) => {
      const parsed = parseLabelSelector(text);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error.length).toBeGreaterThan(0);
    },
  );
});
