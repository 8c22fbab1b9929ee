import { REDACTED, redact, redactionsFor } from '../../../src/core/bundle/redact.js';

describe('redact', () => {
  it('blanks every substituted string and number, as written and as JSON-quoted', () => {
    const redactions = redactionsFor(['hunter2', 123456, { nested: ['s3cr"et'] }]);
    const message = 'metadata.labels: Invalid value: "hunter2": ...; port 123456; value "s3cr\\"et"';
    const out = redact(message, redactions);
    expect(out).toBe(`metadata.labels: Invalid value: "${REDACTED}": ...; port ${REDACTED}; value "${REDACTED}"`);
  });

  it('a value containing another is blanked whole', () => {
    expect(redact('x=abcdefgh', redactionsFor(['abcd', 'abcdefgh']))).toBe(`x=${REDACTED}`);
  });

  it('leaves short values and booleans alone (they would blank unrelated words)', () => {
    expect(redactionsFor(['on', 1, true, null])).toEqual([]);
    expect(redact('port 1 is on', [])).toBe('port 1 is on');
  });
});
