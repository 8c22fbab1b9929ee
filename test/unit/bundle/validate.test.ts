import { Annotations } from '../../../src/api/names.js';
import { MAX_OBJECT_DEPTH, nestingDepth, validateBundle, type ValidationIssue } from '../../../src/core/bundle/validate.js';
import {
  bundle,
  configMap,
  controlledBy,
  deployment,
  KINDS,
  NAMESPACE,
  object,
  resource,
  secret,
  withAnnotation,
  withData,
  withField,
  withNamespace,
  withOwner,
  withPlugin,
  withRef,
  withResource,
  type Mod,
  type TestBundle,
} from './builders.js';

function validate(...mods: Mod<TestBundle>[]): ValidationIssue[] {
  const b = bundle('b', ...mods);
  return validateBundle(b.meta, b.spec, KINDS);
}
const terminal = (resource: string, message: string): ValidationIssue => ({ resource, message, retriable: false });

describe('validateBundle', () => {
  it.each<[string, Mod<TestBundle>[]]>([
    ['an empty Bundle', []],
    ['independent resources', [withResource(resource('a', configMap('a')), resource('b', configMap('b')))]],
    [
      'references in order',
      [
        withResource(
          resource('a', configMap('a', withData({ x: '!{x}' })), withRef('b', { name: 'x', path: 'data.x' })),
          resource('b', configMap('b')),
        ),
      ],
    ],
    ['a namespace equal to the Bundle namespace', [withResource(resource('a', configMap('a', withNamespace(NAMESPACE))))]],
    [
      'a non-controller user ownerReference',
      [withResource(resource('a', configMap('a', withOwner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'u' }))))],
    ],
    ['the deletionDelay annotation', [withResource(resource('a', configMap('a', withAnnotation(Annotations.deletionDelay, '1h'))))]],
  ])('accepts %s', (_name, mods) => {
    expect(validate(...mods)).toEqual([]);
  });

  it.each<[string, Mod<TestBundle>[], ValidationIssue[]]>([
    [
      'duplicate resource names',
      [withResource(resource('a', configMap('a')), resource('b', configMap('b')), resource('a', configMap('c')))],
      [terminal('a', 'name is used by 2 resources (resources[0], resources[2])')],
    ],
    [
      'two resources defining one object',
      [withResource(resource('a', configMap('x')), resource('b', configMap('x')))],
      [terminal('b', 'defines ConfigMap x, already defined by resource "a"')],
    ],
    [
      'a reference to a missing resource',
      [withResource(resource('a', configMap('a'), withRef('nope')))],
      [terminal('a', 'references[0] refers to resource "nope", which is not in the Bundle')],
    ],
    ['a self reference', [withResource(resource('a', configMap('a'), withRef('a')))], [terminal('a', 'reference cycle: a -> a')]],
    [
      'the name "."',
      [withResource(resource('a', configMap('.')))],
      [terminal('a', 'object metadata.name "." cannot be a Kubernetes object name (not ".", "..", nor containing "/" or "%")')],
    ],
    [
      'the name ".."',
      [withResource(resource('a', configMap('..')))],
      [terminal('a', 'object metadata.name ".." cannot be a Kubernetes object name (not ".", "..", nor containing "/" or "%")')],
    ],
    [
      'a name with a slash',
      [withResource(resource('a', configMap('a/b')))],
      [terminal('a', 'object metadata.name "a/b" cannot be a Kubernetes object name (not ".", "..", nor containing "/" or "%")')],
    ],
    [
      'a Bundle listing a Bundle',
      [withResource(resource('inner', object('smith.atlassian.com/v1', 'Bundle', 'inner')))],
      [
        terminal('inner', 'a Bundle cannot list a Bundle (its objects would be reconciled by the operator twice, under two owners)'),
        {
          resource: 'inner',
          message: 'kind Bundle of smith.atlassian.com/v1 is not known to the API server (is its CRD installed?)',
          retriable: true,
        },
      ],
    ],
    [
      'a placeholder as a key',
      [
        withResource(
          resource('a', configMap('a', withData({ '!{x}': 'v' })), withRef('b', { name: 'x', path: 'data.k' })),
          resource('b', configMap('b')),
        ),
      ],
      [terminal('a', 'placeholder used as a key at data.!{x}: placeholders are substituted in values only')],
    ],
    [
      'a number in a ConfigMap',
      [withResource(resource('a', configMap('a', withData({ n: 5 }))))],
      [terminal('a', 'data.n is number: ConfigMap data values must be strings (quote it: "5")')],
    ],
    [
      "a number in a Secret's stringData",
      [withResource(resource('s', secret('s', withField('stringData', { port: 5432, ok: 'x' }))))],
      [terminal('s', 'stringData.port is number: Secret stringData values must be strings (quote it: "5432")')],
    ],
    [
      'a list as Secret data',
      [withResource(resource('s', secret('s', withField('data', ['x']))))],
      [terminal('s', 'data must be a map of strings')],
    ],
    [
      'null ConfigMap data is absent (server-side apply stores an emptied map so)',
      [withResource(resource('a', configMap('a', withField('data', null))))],
      [],
    ],
    [
      'a cycle, named in full',
      [
        withResource(
          resource('a', configMap('a'), withRef('b')),
          resource('b', configMap('b'), withRef('c')),
          resource('c', configMap('c'), withRef('a')),
        ),
      ],
      [terminal('a', 'reference cycle: a -> b -> c -> a')],
    ],
    [
      'a reference name used twice',
      [
        withResource(
          resource(
            'a',
            configMap('a', withData({ x: '!{x}' })),
            withRef('b', { name: 'x', path: 'data.p' }),
            withRef('b', { name: 'x', path: 'data.q' }),
          ),
          resource('b', configMap('b')),
        ),
      ],
      [terminal('a', 'reference name "x" is used 2 times')],
    ],
    [
      'a named reference without path',
      [withResource(resource('a', configMap('a', withData({ x: '!{x}' })), withRef('b', { name: 'x' })), resource('b', configMap('b')))],
      [terminal('a', 'reference "x" has a name but no path')],
    ],
    [
      'a path that does not parse',
      [
        withResource(
          resource('a', configMap('a', withData({ x: '!{x}' })), withRef('b', { name: 'x', path: 'data[*]' })),
          resource('b', configMap('b')),
        ),
      ],
      [
        terminal(
          'a',
          'reference "x": path "data[*]": unsupported subscript "[*]" (use an index like [0] or a quoted key like [\'a.b\']) at offset 4',
        ),
      ],
    ],
    [
      'a modifier',
      [withResource(resource('a', configMap('a'), withRef('b', { modifier: 'bindsecret' })), resource('b', configMap('b')))],
      [terminal('a', 'references[0] has modifier "bindsecret": modifiers are not supported')],
    ],
    [
      'another namespace',
      [withResource(resource('a', configMap('a', withNamespace('other'))))],
      [terminal('a', 'object namespace "other" differs from the Bundle\'s namespace "ns1"')],
    ],
    [
      'a cluster-scoped kind',
      [withResource(resource('ns', object('v1', 'Namespace', 'n')))],
      [terminal('ns', 'Namespace is cluster-scoped: a namespaced Bundle cannot own it')],
    ],
    [
      'an unknown kind (retriable: the CRD may come)',
      [withResource(resource('g', object('example.com/v1', 'Gadget', 'g')))],
      [{ resource: 'g', message: 'kind Gadget of example.com/v1 is not known to the API server (is its CRD installed?)', retriable: true }],
    ],
    [
      'a kind known only at another version',
      [withResource(resource('d', object('apps/v1beta1', 'Deployment', 'd')))],
      [
        {
          resource: 'd',
          message: 'kind Deployment of apps/v1beta1 is not known to the API server (is its CRD installed?)',
          retriable: true,
        },
      ],
    ],
    [
      'a user controller ownerReference',
      [withResource(resource('a', configMap('a', controlledBy('ReplicaSet', 'rs'))))],
      [terminal('a', 'object has an ownerReference with controller: true (ReplicaSet rs); the Bundle must be the controller')],
    ],
    [
      'the deletionTimestamp annotation',
      [withResource(resource('a', configMap('a', withAnnotation(Annotations.deletionTimestamp, '2026-01-01T00:00:00Z'))))],
      [terminal('a', `object carries the ${Annotations.deletionTimestamp} annotation, which only the operator may set`)],
    ],
    [
      'the deletionApproved annotation (it would approve the next countdown before it began)',
      [withResource(resource('a', configMap('a', withAnnotation(Annotations.deletionApproved, '2999-01-01T00:00:00Z'))))],
      [
        terminal(
          'a',
          `object carries the ${Annotations.deletionApproved} annotation, which approves one countdown on the live object (bundlesmith approve) and cannot be part of a Bundle`,
        ),
      ],
    ],
    [
      'the release-proof annotation',
      [withResource(resource('a', configMap('a', withAnnotation(Annotations.releaseProof, 'v2:abc'))))],
      [terminal('a', `object carries the ${Annotations.releaseProof} annotation, which only the operator may set`)],
    ],
    [
      'a plugin',
      [withResource(resource('p', undefined, withPlugin('catalog')))],
      [terminal('p', 'spec.plugin ("catalog") is not supported; use spec.object')],
    ],
    ['neither object nor plugin', [withResource(resource('e', undefined))], [terminal('e', 'spec has neither object nor plugin')]],
    [
      'a placeholder naming no reference',
      [withResource(resource('a', configMap('a', withData({ x: '!{x}' }))))],
      [terminal('a', 'placeholder "!{x}" at data.x names no reference of this resource')],
    ],
    [
      'a placeholder naming a nameless reference',
      [withResource(resource('a', deployment('a', withField('spec', { replicas: '!{b}' })), withRef('b')), resource('b', configMap('b')))],
      [terminal('a', 'placeholder "!{b}" at spec.replicas names no reference of this resource')],
    ],
    [
      'a placeholder as the object name',
      [withResource(resource('a', configMap('!{n}'), withRef('b', { name: 'n', path: 'data.n' })), resource('b', configMap('b')))],
      [terminal('a', 'object metadata.name cannot be a reference placeholder ("!{n}")')],
    ],
  ])('reports %s', (_name, mods, issues) => {
    expect(validate(...mods)).toEqual(issues);
  });

  it('reports every issue of a resource', () => {
    const issues = validate(
      withResource(resource('a', configMap('a', withNamespace('x'), withData({ y: '!{y}' })), withRef('gone', { modifier: 'm' }))),
    );
    expect(issues.map((i) => i.message)).toEqual([
      'references[0] refers to resource "gone", which is not in the Bundle',
      'references[0] has modifier "m": modifiers are not supported',
      'object namespace "x" differs from the Bundle\'s namespace "ns1"',
      'placeholder "!{y}" at data.y names no reference of this resource',
    ]);
  });
});

describe('nesting bound (issue 12)', () => {
  const nested = (depth: number): Record<string, unknown> => {
    let v: Record<string, unknown> = { leaf: '!{x}' };
    for (let i = 1; i < depth; i++) v = { n: [v] };
    return v;
  };

  it('counts depth without recursion, and stops past the limit', () => {
    expect(nestingDepth('x')).toBe(0);
    expect(nestingDepth({ a: { b: [1] } })).toBe(3);
    expect(nestingDepth(nested(100_000))).toBe(MAX_OBJECT_DEPTH + 1);
  });

  it('refuses an object nested 5,000 levels with a clear issue, before any recursive walk', () => {
    const issues = validate(withResource(resource('deep', configMap('deep', withField('data', nested(5_000))))));
    expect(issues).toEqual([
      terminal('deep', `object nests deeper than ${MAX_OBJECT_DEPTH} levels: refused (no Kubernetes object needs that)`),
    ]);
  });
});
