import type { Resource } from '../../../src/api/resource.js';
import type { LiveObject } from '../../../src/core/bundle/objects.js';
import { findPlaceholders, placeholderName, resolveObject, substitutePlaceholders } from '../../../src/core/bundle/references.js';
import { configMap, live, resource, secret, service, withData, withRef, withSpec, withStatus } from './builders.js';

describe('placeholderName', () => {
  it.each<[unknown, string | undefined]>([
    ['!{db}', 'db'],
    ['!{a-b.c}', 'a-b.c'],
    ['x!{db}', undefined],
    ['!{db}x', undefined],
    ['!{}', undefined],
    ['{db}', undefined],
    [42, undefined],
  ])('%j -> %j', (value, name) => {
    expect(placeholderName(value)).toBe(name);
  });
});

describe('findPlaceholders', () => {
  it('lists each exact placeholder with where it is', () => {
    const obj = { spec: { a: '!{x}', list: ['plain', '!{y}', { deep: '!{x}' }], partial: 'pre-!{z}' } };
    expect(findPlaceholders(obj)).toEqual([
      { name: 'x', at: 'spec.a' },
      { name: 'y', at: 'spec.list[1]' },
      { name: 'x', at: 'spec.list[2].deep' },
    ]);
  });
});

describe('substitutePlaceholders keeps the value type', () => {
  const values = new Map<string, unknown>([
    ['port', 8080],
    ['on', true],
    ['off', false],
    ['ip', '10.0.0.1'],
    ['obj', { a: [1, { b: 2 }] }],
    ['list', ['x', 'y']],
  ]);
  it.each<[string, unknown, unknown]>([
    ['number', { port: '!{port}' }, { port: 8080 }],
    ['true', { enabled: '!{on}' }, { enabled: true }],
    ['false (a falsy value still substitutes)', { enabled: '!{off}' }, { enabled: false }],
    ['string', { ip: '!{ip}' }, { ip: '10.0.0.1' }],
    ['object', { x: '!{obj}' }, { x: { a: [1, { b: 2 }] } }],
    ['array', { x: '!{list}' }, { x: ['x', 'y'] }],
    ['inside arrays', { ports: [{ port: '!{port}' }] }, { ports: [{ port: 8080 }] }],
    ['embedded placeholders are left alone', { url: 'http://!{ip}' }, { url: 'http://!{ip}' }],
    ['unknown names are left alone', { x: '!{nope}' }, { x: '!{nope}' }],
  ])('%s', (_name, input, expected) => {
    expect(substitutePlaceholders(input, values)).toEqual(expected);
  });

  it('copies substituted objects, so the live object is never shared', () => {
    const source = { a: 1 };
    const out = substitutePlaceholders({ x: '!{o}' }, new Map([['o', source]])) as { x: { a: number } };
    out.x.a = 2;
    expect(source.a).toBe(1);
  });
});

describe('resolveObject', () => {
  const liveObjects: Record<string, LiveObject> = {
    svc: live(service('svc', withSpec({ ports: [{ port: 5432 }] }), withStatus({ loadBalancer: {} }))),
    cfg: live(configMap('cfg', withData({ host: 'db.local' }))),
    sec: live(secret('sec', withData({ password: 'cGFzcw==' }))),
  };
  const liveOf = (name: string): LiveObject | undefined => liveObjects[name];

  it('substitutes values from the dependencies, type preserved', () => {
    const r = resource(
      'app',
      configMap('app', withData({ port: '!{port}', host: '!{host}', pw: '!{pw}' })),
      withRef('svc', { name: 'port', path: 'spec.ports[0].port' }),
      withRef('cfg', { name: 'host', path: '{.data.host}' }),
      withRef('sec', { name: 'pw', path: 'data.password' }),
      withRef('cfg'),
    );
    expect(resolveObject(r.spec.object, r, liveOf)).toEqual({
      ok: true,
      object: configMap('app', withData({ port: 5432, host: 'db.local', pw: 'cGFzcw==' })),
      substituted: [5432, 'db.local', 'cGFzcw=='],
    });
  });

  it.each<[string, Resource, string[]]>([
    [
      'path absent on the dependency (names reference, path and object)',
      resource(
        'app',
        configMap('app', withData({ ip: '!{ip}' })),
        withRef('svc', { name: 'ip', path: 'status.loadBalancer.ingress[0].ip' }),
      ),
      ['reference "ip" to resource "svc": path "status.loadBalancer.ingress[0].ip" not found on Service ns1/svc'],
    ],
    [
      'dependency without a live object',
      resource('app', configMap('app', withData({ x: '!{x}' })), withRef('missing', { name: 'x', path: 'data.x' })),
      ['reference "x" to resource "missing": the resource does not exist yet'],
    ],
    [
      'every failing reference is reported',
      resource(
        'app',
        configMap('app'),
        withRef('cfg', { name: 'a', path: 'data.nope' }),
        withRef('cfg', { name: 'b', path: 'data.host' }),
        withRef('svc', { name: 'c', path: 'status.x' }),
      ),
      [
        'reference "a" to resource "cfg": path "data.nope" not found on ConfigMap ns1/cfg',
        'reference "c" to resource "svc": path "status.x" not found on Service ns1/svc',
      ],
    ],
  ])('%s', (_name, r, errors) => {
    expect(resolveObject(r.spec.object, r, liveOf)).toEqual({ ok: false, errors });
  });

  it('a nameless reference only orders: its dependency need not exist', () => {
    const r = resource('app', configMap('app'), withRef('missing'));
    expect(resolveObject(r.spec.object, r, liveOf)).toEqual({ ok: true, object: configMap('app'), substituted: [] });
  });
});
