/** One version per group/resource, and what each consumer then keeps of it: the GC's watches, the sweeper's (and `bundlesmith pending`'s). */
import { describe, expect, it } from '@jest/globals';
import { collectableResources } from '../../../src/controllers/gc/collector.js';
import { sweepable } from '../../../src/core/softdelete/sweep.js';
import { preferredVersions } from '../../../src/kube/discovery.js';
import type { ResourceType } from '../../../src/kube/types.js';

const ALL = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const rt = (apiVersion: string, kind: string, plural: string, opts: { namespaced?: boolean; verbs?: string[] } = {}): ResourceType => {
  const slash = apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    apiVersion,
    kind,
    plural,
    namespaced: opts.namespaced ?? true,
    verbs: opts.verbs ?? ALL,
  };
};
const names = (list: readonly ResourceType[]) => list.map((r) => `${r.apiVersion}/${r.plural}`);

describe('preferredVersions', () => {
  it('keeps the first version the server lists of each group/resource, in order', () => {
    const served = [
      rt('apps/v1', 'Deployment', 'deployments'),
      rt('v1', 'ConfigMap', 'configmaps'),
      rt('apps/v1beta1', 'Deployment', 'deployments'),
      rt('x.io/v2', 'Widget', 'widgets'),
      rt('x.io/v1', 'Widget', 'widgets'),
    ];
    expect(names(preferredVersions(served))).toEqual(['apps/v1/deployments', 'v1/configmaps', 'x.io/v2/widgets']);
  });

  it('the same plural in two groups is two resources', () => {
    expect(names(preferredVersions([rt('a.io/v1', 'Thing', 'things'), rt('b.io/v1', 'Thing', 'things')]))).toEqual([
      'a.io/v1/things',
      'b.io/v1/things',
    ]);
  });
});

describe('consumers filter the preferred version', () => {
  const served = [
    rt('v1', 'ConfigMap', 'configmaps'),
    rt('v1', 'Event', 'events'),
    rt('events.k8s.io/v1', 'Event', 'events'),
    rt('v1', 'Pod', 'pods/log', { verbs: ['get'] }),
    rt('v1', 'Namespace', 'namespaces', { namespaced: false }),
    rt('x.io/v2', 'Widget', 'widgets', { verbs: ['get', 'list'] }),
    rt('x.io/v1', 'Widget', 'widgets'),
  ];

  it.each<[string, (list: ResourceType[]) => ResourceType[], string[]]>([
    ['garbage collector: list, watch, delete; no events, no subresources', collectableResources, ['v1/configmaps', 'v1/namespaces']],
    [
      'sweeper and pending: namespaced, list, watch, patch, delete; no events',
      (l) => preferredVersions(l).filter(sweepable),
      ['v1/configmaps'],
    ],
  ])('%s', (_name, choose, expected) => {
    expect(names(choose(served))).toEqual(expected);
  });
});
