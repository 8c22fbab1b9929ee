import { Writable } from 'node:stream';
import { createLogger, objectRef } from '../../../src/observability/logger.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[]; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    text: () => text,
  };
}

describe('the JSON log line', () => {
  it('names the level ("info", "error"), never pino\'s number', () => {
    const out = capture();
    const log = createLogger('debug', 'bundlesmith', out.stream);
    log.info('one');
    log.error({ err: 'boom' }, 'two');
    log.child({ controller: 'bundle' }).debug('three');
    expect(out.lines().map((l) => [l.level, l.msg])).toEqual([
      ['info', 'one'],
      ['error', 'two'],
      ['debug', 'three'],
    ]);
    for (const l of out.lines()) {
      expect(typeof l.time).toBe('string');
      expect(l.component).toBe('bundlesmith');
    }
  });

  it('keeps the level filter', () => {
    const out = capture();
    const log = createLogger('warn', 'bundlesmith', out.stream);
    log.info('hidden');
    log.warn('shown');
    expect(out.lines().map((l) => l.level)).toEqual(['warn']);
  });

  it('names an object by separate namespace and name keys', () => {
    const out = capture();
    createLogger('info', 'bundlesmith', out.stream).child(objectRef('team-a/web')).info('reconciled');
    expect(out.lines()[0]).toMatchObject({ namespace: 'team-a', name: 'web' });
    expect(JSON.stringify(out.lines()[0])).not.toContain('team-a/web');
    // One `name` key on the line (the logger's own name is `component`).
    expect(out.text().match(/"name":/g)).toHaveLength(1);
  });

  it.each([
    ['team-a/web', { namespace: 'team-a', name: 'web' }],
    ['cluster-scoped', { namespace: '', name: 'cluster-scoped' }],
  ])('objectRef(%s)', (key, fields) => {
    expect(objectRef(key)).toEqual(fields);
  });
});
