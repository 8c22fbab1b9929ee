import { evaluatePath, getPath, parsePath, type PathSegment } from '../../../src/core/bundle/path.js';

describe('parsePath', () => {
  it.each<[string, PathSegment[]]>([
    ['status.clusterIP', ['status', 'clusterIP']],
    ['data.password', ['data', 'password']],
    ['spec.ports[0].port', ['spec', 'ports', 0, 'port']],
    ["metadata.annotations['a.b/c']", ['metadata', 'annotations', 'a.b/c']],
    ['metadata.annotations["a.b/c"]', ['metadata', 'annotations', 'a.b/c']],
    ["metadata.labels['x'].y", ['metadata', 'labels', 'x', 'y']],
    ['{.status.x}', ['status', 'x']],
    ['{ .status.x }', ['status', 'x']],
    ['.status.x', ['status', 'x']],
    ['$.status.x', ['status', 'x']],
    ['{$.status.x}', ['status', 'x']],
    ['{.metadata.annotations.a\\.b/c}', ['metadata', 'annotations', 'a.b/c']],
    ['items[1][2]', ['items', 1, 2]],
  ])('%s', (path, segments) => {
    expect(parsePath(path)).toEqual({ ok: true, segments });
  });

  it.each<[string, string]>([
    ['', 'empty'],
    ['{}', 'empty'],
    ['a..b', 'empty field name'],
    ['a.', 'trailing'],
    ['a[0', 'unclosed'],
    ['a[*]', 'unsupported subscript'],
    ['a[?(@.x)]', 'unsupported subscript'],
    ['a[-1]', 'unsupported subscript'],
    ['a.*', 'unsupported character'],
  ])('rejects %j (%s)', (path, why) => {
    const parsed = parsePath(path);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toContain(why);
  });
});

describe('evaluatePath', () => {
  const obj = {
    spec: { ports: [{ port: 80 }, { port: 443 }], flag: false, zero: 0, empty: '' },
    status: { clusterIP: '10.0.0.1', nothing: null, nested: { a: [1, 2] } },
    metadata: { annotations: { 'a.b/c': 'v' } },
  };
  it.each<[string, unknown]>([
    ['status.clusterIP', '10.0.0.1'],
    ['spec.ports[1].port', 443],
    ['spec.ports[0]', { port: 80 }],
    ['spec.flag', false],
    ['spec.zero', 0],
    ['spec.empty', ''],
    ['status.nested', { a: [1, 2] }],
    ["metadata.annotations['a.b/c']", 'v'],
    ['{.status.nested.a[1]}', 2],
  ])('%s finds %j', (path, value) => {
    expect(getPath(obj, path)).toEqual({ found: true, value });
  });

  it.each([
    ['status.missing'],
    ['status.nothing'],
    ['spec.ports[2].port'],
    ['spec.ports.port'],
    ['status.clusterIP.x'],
    ['spec.ports[0].port[0]'],
  ])('%s is absent', (path) => {
    expect(getPath(obj, path)).toEqual({ found: false });
  });

  it('does not read inherited properties', () => {
    expect(evaluatePath({}, ['toString'])).toEqual({ found: false });
  });

  it('reports a path that does not parse', () => {
    expect(getPath(obj, 'a..b')).toEqual({ found: false, message: 'path "a..b": empty field name at offset 2' });
  });
});
