/**
 * The gc suite's rbac dimension: our collector acts as a user of its own
 * (`--impersonate`), whose ClusterRole grants what the chart grants the
 * collector; a seed that draws the dimension takes some of it away for a
 * stretch of its steps and gives it back. kube-controller-manager keeps its
 * rights throughout: while ours lacks some, it may lag (only a wrongful
 * delete is judged then), and once they are back it must reach the same end.
 */
import type { KubeClient } from '../../../src/kube/client.js';
import { Discovery } from '../../../src/kube/discovery.js';
import type { ResourceType } from '../../../src/kube/types.js';
import { CORE_COLLECTED_RESOURCES, type PolicyRule } from '../softdelete/rbac.js';
import { TEST_GROUP, type GcRevocation } from './plan.js';

export const GC_REVOCATION_TEXT: Record<GcRevocation, string> = {
  'configmaps-delete': 'delete on configmaps',
  'configmaps-patch': 'patch and update on configmaps',
  'configmaps-list': 'list and watch on configmaps',
  'crs-list': `list and watch on every resource of ${TEST_GROUP}`,
};

/** The user our collector acts as. */
export const COLLECTOR_USER = 'fuzz-gc-collector';
const MANAGER = 'fuzz-admin';
const NAME = 'fuzz-gc-collector';
const OBJECT_VERBS = ['get', 'list', 'watch', 'patch', 'delete'];

const without = (verbs: readonly string[], taken: readonly string[]): string[] => verbs.filter((v) => !taken.includes(v));

/**
 * The collector's rules (the chart's gc rules, as templates/rbac.yaml
 * renders them for `gc.mode=cluster`: every served group, the core kinds by
 * name) plus the Bundle controller's, with the test group's resources and
 * the ConfigMaps written out so that a revocation can narrow them (RBAC has
 * no deny). Pure.
 */
export function collectorRules(servedGroups: readonly string[], testResources: readonly string[], revoked?: GcRevocation): PolicyRule[] {
  const others = servedGroups.filter((g) => g !== '' && g !== TEST_GROUP && g !== 'smith.atlassian.com');
  const cm =
    revoked === 'configmaps-delete'
      ? ['delete']
      : revoked === 'configmaps-patch'
        ? ['patch', 'update']
        : revoked === 'configmaps-list'
          ? ['list', 'watch']
          : [];
  const crs = revoked === 'crs-list' ? ['list', 'watch'] : [];
  return [
    { apiGroups: ['smith.atlassian.com'], resources: ['*'], verbs: ['*'] },
    ...(others.length > 0 ? [{ apiGroups: others, resources: ['*'], verbs: OBJECT_VERBS }] : []),
    { apiGroups: [''], resources: [...CORE_COLLECTED_RESOURCES], verbs: OBJECT_VERBS },
    { apiGroups: [''], resources: ['configmaps'], verbs: without([...OBJECT_VERBS, 'update'], cm) },
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: [TEST_GROUP], resources: [...testResources], verbs: without(OBJECT_VERBS, crs) },
  ];
}

const rbacType = (kind: string, plural: string): ResourceType => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  plural,
  namespaced: false,
  verbs: ['get', 'create', 'patch', 'delete'],
});

/** Our collector's ClusterRole and binding, kept as a seed's revocation says. */
export class CollectorRbac {
  private testResources: string[] = ['widgets', 'realms'];

  constructor(private readonly client: KubeClient) {}

  /** Grants everything (and names the seed's gadget resource, if any), waits until in force. */
  async grant(gadgetPlural?: string): Promise<void> {
    this.testResources = ['widgets', 'realms', ...(gadgetPlural ? [gadgetPlural] : [])];
    await this.apply(undefined);
    await this.client.apply(
      rbacType('ClusterRoleBinding', 'clusterrolebindings'),
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: NAME },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NAME },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: COLLECTOR_USER }],
      },
      { fieldManager: MANAGER, force: true },
    );
    await this.until('delete', '', 'configmaps', true);
    await this.until('list', TEST_GROUP, 'widgets', true);
  }

  async revoke(what: GcRevocation): Promise<void> {
    await this.apply(what);
    const [verb, group, resource] =
      what === 'configmaps-delete'
        ? ['delete', '', 'configmaps']
        : what === 'configmaps-patch'
          ? ['patch', '', 'configmaps']
          : what === 'configmaps-list'
            ? ['list', '', 'configmaps']
            : ['list', TEST_GROUP, 'widgets'];
    await this.until(verb, group, resource, false);
  }

  private async apply(revoked: GcRevocation | undefined): Promise<void> {
    const discovery = new Discovery(this.client, 0);
    await discovery.refresh();
    const groups = [...new Set(discovery.resources().map((r) => r.group))].sort();
    // Every resource the test group serves now (earlier seeds' CRDs stay), and the seed's own to come.
    const served = discovery
      .resources()
      .filter((r) => r.group === TEST_GROUP)
      .map((r) => r.plural);
    const testResources = [...new Set([...this.testResources, ...served])].sort();
    await this.client.apply(
      rbacType('ClusterRole', 'clusterroles'),
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: NAME },
        rules: collectorRules(groups, testResources, revoked),
      },
      { fieldManager: MANAGER, force: true },
    );
  }

  /** Waits until the authorizer answers `want` for the collector's user (a SubjectAccessReview). */
  private async until(verb: string, group: string, resource: string, want: boolean): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const review = (await this.client.raw('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: COLLECTOR_USER, groups: ['system:authenticated'], resourceAttributes: { verb, group, resource } },
      })) as { status?: { allowed?: unknown } };
      if ((review.status?.allowed === true) === want) return;
      if (Date.now() > deadline) throw new Error(`RBAC: ${verb} ${group}/${resource} still ${want ? 'refused' : 'allowed'} after 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
