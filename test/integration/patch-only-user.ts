/**
 * A user who may get and patch some objects of one namespace and nothing
 * else (no delete, no rights in the operator's namespace): the red teams'
 * "someone who may only patch", who writes an earlier copy of an object's
 * annotations back.
 */
import { KubeClient, loadKubeConfig } from '../../src/kube/client.js';
import { kubeconfigPath, resourceType, uniqueName, type TestEnv } from './harness.js';

const RBAC = 'rbac.authorization.k8s.io/v1';

/** A client acting as a new user bound to get and patch `rule`'s resources in `ns`; close it after the test. */
export async function patchOnlyUser(env: TestEnv, ns: string, rule: { apiGroups: string[]; resources: string[] }): Promise<KubeClient> {
  const user = uniqueName('patcher');
  await env.client.create(await resourceType(env, RBAC, 'Role'), {
    apiVersion: RBAC,
    kind: 'Role',
    metadata: { name: user, namespace: ns },
    rules: [{ ...rule, verbs: ['get', 'patch'] }],
  });
  await env.client.create(await resourceType(env, RBAC, 'RoleBinding'), {
    apiVersion: RBAC,
    kind: 'RoleBinding',
    metadata: { name: user, namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  return KubeClient.fromKubeConfig(loadKubeConfig(kubeconfigPath()), { impersonateUser: user, impersonateGroups: [] });
}

/** The JSON pointer of an annotation. */
export const annotationPointer = (annotation: string): string =>
  `/metadata/annotations/${annotation.replace(/~/g, '~0').replace(/\//g, '~1')}`;
