/**
 * An operator whose rights on its own release records can be taken away and
 * given back (red team 40): it runs in-process impersonating a user with
 * what the chart grants (everything in the test namespace; the release key
 * Secret and, through a RoleBinding of its own, the record ConfigMaps in
 * the records' namespace). `withoutRecords` deletes that RoleBinding for a
 * while and creates it again.
 */
import { connect, createNamespace, resourceType, uniqueName, type TestEnv } from './harness.js';
import { types, type KnownTypes } from './bundles.js';
import { startOperator, type InProcessOperator } from './operator.js';
import { RELEASE_RECORDS_NAMESPACE, sleep } from './release-writeback.js';

const RBAC = 'rbac.authorization.k8s.io/v1';

export interface RecordsRbacFixture {
  env: TestEnv;
  ns: string;
  t: KnownTypes;
  /**
   * Runs `during` with the operator's rights on the record ConfigMaps taken
   * away, given back when it ends (thrown or not); with RT40_CONTROL=1 they
   * are never taken (the control run).
   */
  withoutRecords: <T>(during: () => Promise<T>) => Promise<T>;
  /** The user the operators impersonate. */
  user: string;
}

/** Before all tests: the user, its roles and the operators (default: one) on a namespace `prefix`-...; after: they are stopped. */
export function recordsRbacFixture(
  prefix: string,
  /** The operators to start (default: one, watching the namespace); each is stopped after all tests. */
  operators: (fixture: RecordsRbacFixture) => Promise<InProcessOperator[]> = async (f) => [
    await startOperator({ namespace: f.ns, impersonate: { user: f.user } }),
  ],
): RecordsRbacFixture {
  const fixture = {} as RecordsRbacFixture;
  const user = uniqueName('rt40-op');
  fixture.user = user;
  let ops: InProcessOperator[] = [];
  /** A RoleBinding in `namespace` (a ClusterRoleBinding where none) of the role to the user. */
  const bind = async (name: string, namespace: string | undefined, roleRef: { kind: 'Role' | 'ClusterRole'; name: string }) => {
    const kind = namespace === undefined ? 'ClusterRoleBinding' : 'RoleBinding';
    await fixture.env.client.create(await resourceType(fixture.env, RBAC, kind), {
      apiVersion: RBAC,
      kind,
      metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
  };
  const role = async (name: string, rules: unknown[], namespace?: string) => {
    const kind = namespace === undefined ? 'ClusterRole' : 'Role';
    await fixture.env.client.create(await resourceType(fixture.env, RBAC, kind), {
      apiVersion: RBAC,
      kind,
      metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
      rules,
    });
  };
  const recordsName = `${user}-records`;
  const bindRecords = () => bind(recordsName, RELEASE_RECORDS_NAMESPACE, { kind: 'Role', name: recordsName });
  fixture.withoutRecords = async (during) => {
    if (process.env.RT40_CONTROL === '1') return during();
    const rb = await resourceType(fixture.env, RBAC, 'RoleBinding');
    const found = await fixture.env.client.get(rb, RELEASE_RECORDS_NAMESPACE, recordsName);
    await fixture.env.client.delete(rb, RELEASE_RECORDS_NAMESPACE, recordsName, { uid: found.metadata.uid ?? '' });
    try {
      return await during();
    } finally {
      await bindRecords();
    }
  };
  beforeAll(async () => {
    fixture.env = await connect();
    fixture.ns = await createNamespace(fixture.env, prefix);
    fixture.t = await types(fixture.env);
    await role(user, [
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['*'], verbs: ['create'] },
      { nonResourceURLs: ['*'], verbs: ['get'] },
    ]);
    await bind(user, undefined, { kind: 'ClusterRole', name: user });
    // Everything in the test namespace.
    await bind(user, fixture.ns, { kind: 'ClusterRole', name: 'cluster-admin' });
    // The chart's release-key Role: the key Secret; and the records.
    await role(`${user}-key`, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create'] }], RELEASE_RECORDS_NAMESPACE);
    await bind(`${user}-key`, RELEASE_RECORDS_NAMESPACE, { kind: 'Role', name: `${user}-key` });
    const records = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch', 'delete'] }];
    await role(`${user}-records`, records, RELEASE_RECORDS_NAMESPACE);
    await bindRecords();
    // RBAC's authorizer caches: let the grants be seen before the operator's first request.
    await sleep(2_000);
    ops = await operators(fixture);
  }, 180_000);
  afterAll(async () => {
    for (const op of ops) await op.stop();
    fixture.env?.close();
  });
  return fixture;
}
