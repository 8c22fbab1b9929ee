import { describe, expect, it } from '@jest/globals';
import { eventName } from '../../../src/kube/client.js';

describe('eventName', () => {
  it('keeps the unique suffix for a name at the API limit (fuzz seed 16351: every event of a 253-character name had one name)', () => {
    const long = `${'a'.repeat(120)}.${'b'.repeat(132)}`;
    expect(long).toHaveLength(253);
    const one = eventName(long, 'lx1abc');
    const two = eventName(long, 'lx1abd');
    expect(one).not.toBe(two);
    expect(one.length).toBeLessThanOrEqual(253);
    expect(one.endsWith('.lx1abc')).toBe(true);
  });
  it('never leaves a label ending in "-" or "."', () => {
    const name = eventName(`${'a'.repeat(244)}-.-b${'c'.repeat(5)}`, 'sfx123');
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
    expect(name.length).toBeLessThanOrEqual(253);
  });
  it('a short name is kept whole', () => {
    expect(eventName('web', 'sfx')).toBe('web.sfx');
  });
});
