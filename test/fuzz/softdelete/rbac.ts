/**
 * The rbac dimension's rules (dimensions.ts): the operator's rights as the
 * chart grants them, and those rights without what a revocation takes.
 * Pure (no client), so the unit tests can read them.
 */
import type { RbacRevocation } from './dimensions.js';

/** The fuzzer's own API group (its Gates and the seed's versioned CRD). */
export const FUZZ_GROUP = 'fuzz.bundlesmith.dev';

/** One RBAC rule, as rbac.authorization.k8s.io/v1 writes it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** A Role (namespaced) or ClusterRole of the operator's ServiceAccount, bound to it by a binding of the same name. */
export interface OperatorRole {
  name: string;
  namespace?: string;
  rules: PolicyRule[];
}

/** The core kinds the chart's collector rules name (templates/rbac.yaml), besides ConfigMaps. */
export const CORE_COLLECTED_RESOURCES: readonly string[] = [
  'endpoints',
  'limitranges',
  'namespaces',
  'nodes',
  'persistentvolumeclaims',
  'persistentvolumes',
  'pods',
  'podtemplates',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'serviceaccounts',
  'services',
];

/** The chart's values.yaml rbac.objectResources (the kinds Bundles may hold). */
const CHART_OBJECT_RESOURCES: { apiGroups: string[]; resources: string[] }[] = [
  { apiGroups: [''], resources: ['configmaps', 'secrets', 'services', 'serviceaccounts', 'persistentvolumeclaims', 'pods', 'endpoints'] },
  { apiGroups: ['apps'], resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'] },
  { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'] },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'] },
  { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'] },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'] },
  { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'] },
  { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'] },
];

/**
 * The operator's rights as the chart grants them (templates/rbac.yaml and
 * _helpers.tpl with `watchNamespace=<ns>`, `gc.mode=cluster`, no lockdown,
 * leader election only with replicas), for the ServiceAccount of a seed:
 * CRD reads cluster-wide; the Bundle rules and the object kinds in the
 * seed's namespace (the chart's default kinds plus the fuzzer's own, as a
 * chart user adds theirs); the collector's rules over every API group the
 * server serves now (as the chart renders them from the served versions);
 * the release key (in `keyNamespace`); the Lease.
 */
export function operatorRoles(
  namespace: string,
  servedGroups: readonly string[],
  fuzzKinds: readonly string[],
  keyNamespace: string,
  leaderElection: boolean,
): OperatorRole[] {
  const base = `bundlesmith-${namespace}`;
  const objectVerbs = ['get', 'list', 'watch', 'create', 'patch', 'delete'];
  const bundleRules: PolicyRule[] = [
    { apiGroups: ['smith.atlassian.com'], resources: ['bundles'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
    { apiGroups: ['smith.atlassian.com'], resources: ['bundles/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: ['smith.atlassian.com'], resources: ['bundles/finalizers'], verbs: ['update'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
    ...[...CHART_OBJECT_RESOURCES, { apiGroups: [FUZZ_GROUP], resources: [...fuzzKinds] }].map((r) => ({ ...r, verbs: objectVerbs })),
  ];
  const writable = servedGroups.filter((g) => g !== 'admissionregistration.k8s.io');
  const gcRules: PolicyRule[] = [
    ...(writable.length > 0 ? [{ apiGroups: [...writable], resources: ['*'], verbs: ['get', 'list', 'watch', 'patch', 'delete'] }] : []),
    { apiGroups: ['admissionregistration.k8s.io'], resources: ['*'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [''], resources: ['configmaps', ...CORE_COLLECTED_RESOURCES], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
    { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
  ];
  return [
    {
      name: base,
      rules: [{ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'list', 'watch'] }],
    },
    { name: base, namespace, rules: bundleRules },
    { name: `${base}-gc`, rules: gcRules },
    {
      name: `${base}-release-key`,
      namespace: keyNamespace,
      rules: [
        { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['bundlesmith-release-key'], verbs: ['get'] },
        // The records of releases' latest signings, beside the key (controllers/softdelete/release-records.ts).
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch', 'delete'] },
      ],
    },
    ...(leaderElection
      ? [
          {
            name: `${base}-leader-election`,
            namespace,
            rules: [
              { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
              {
                apiGroups: ['coordination.k8s.io'],
                resources: ['leases'],
                resourceNames: ['bundlesmith-leader'],
                verbs: ['get', 'update'],
              },
            ],
          },
        ]
      : []),
  ];
}

/** What a revocation takes: verbs on one resource of one group. */
export function revokedRights(
  what: Exclude<RbacRevocation, 'binding' | 'admission-configmaps' | 'records'>,
  fuzzKinds: readonly string[],
): { group: string; resource: string; verbs: string[] }[] {
  switch (what) {
    case 'configmaps-delete':
      return [{ group: '', resource: 'configmaps', verbs: ['delete'] }];
    case 'configmaps-patch':
      return [{ group: '', resource: 'configmaps', verbs: ['patch', 'update'] }];
    case 'configmaps-list':
      return [{ group: '', resource: 'configmaps', verbs: ['list', 'watch'] }];
    case 'crs-list':
      return fuzzKinds.map((resource) => ({ group: FUZZ_GROUP, resource, verbs: ['list', 'watch'] }));
    case 'bundles-list':
      return [{ group: 'smith.atlassian.com', resource: 'bundles', verbs: ['list', 'watch'] }];
    case 'bundles-status':
      return [{ group: 'smith.atlassian.com', resource: 'bundles/status', verbs: ['patch', 'update'] }];
  }
}

/**
 * The resources a `*` of these groups stands for, written out when part of
 * it is revoked (RBAC has no deny: a wildcard must be narrowed instead).
 */
function wildcardResources(group: string, fuzzKinds: readonly string[]): string[] | undefined {
  if (group === 'smith.atlassian.com') return ['bundles', 'bundles/status', 'bundles/finalizers'];
  if (group === FUZZ_GROUP) return fuzzKinds.flatMap((k) => [k, `${k}/status`]);
  return undefined;
}

/** The rules without the revoked verbs: rules are split by group and resource only where a revocation touches them. */
export function withoutRights(
  rules: readonly PolicyRule[],
  revoked: readonly { group: string; resource: string; verbs: string[] }[],
  fuzzKinds: readonly string[],
): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const rule of rules) {
    const touched = rule.apiGroups.filter((g) => revoked.some((r) => r.group === g));
    if (touched.length === 0) {
      out.push(rule);
      continue;
    }
    const rest = rule.apiGroups.filter((g) => !touched.includes(g));
    if (rest.length > 0) out.push({ ...rule, apiGroups: rest });
    for (const group of touched) {
      const resources = rule.resources.includes('*') ? (wildcardResources(group, fuzzKinds) ?? rule.resources) : rule.resources;
      for (const resource of resources) {
        const take = revoked.filter((r) => r.group === group && r.resource === resource).flatMap((r) => r.verbs);
        const verbs = rule.verbs.filter((v) => !take.includes(v));
        if (verbs.length > 0) out.push({ ...rule, apiGroups: [group], resources: [resource], verbs });
      }
    }
  }
  return out;
}
