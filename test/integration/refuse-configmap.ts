/**
 * A ValidatingAdmissionPolicy (and its binding) refusing, as Forbidden, one
 * operation on one ConfigMap of a namespace: what another team's policy
 * engine may do. Returns what removes both (by UID).
 */
import type { TestEnv } from './harness.js';
import { resourceType } from './harness.js';

const ADMISSION = 'admissionregistration.k8s.io/v1';

export async function refuseConfigMapOperation(
  env: TestEnv,
  ns: string,
  name: string,
  operation: 'UPDATE' | 'DELETE',
  message: string,
): Promise<() => Promise<void>> {
  const policyType = await resourceType(env, ADMISSION, 'ValidatingAdmissionPolicy');
  const bindingType = await resourceType(env, ADMISSION, 'ValidatingAdmissionPolicyBinding');
  const policyName = `${ns}-refuse-${operation.toLowerCase()}-${name}`;
  await env.client.create(policyType, {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: policyName },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: [operation], resources: ['configmaps'] }] },
      validations: [
        { expression: `oldObject.metadata.namespace != '${ns}' || oldObject.metadata.name != '${name}'`, reason: 'Forbidden', message },
      ],
    },
  });
  await env.client.create(bindingType, {
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policyName },
    spec: { policyName, validationActions: ['Deny'] },
  });
  return async () => {
    const binding = await env.client.tryGet(bindingType, undefined, policyName);
    if (binding) await env.client.delete(bindingType, undefined, policyName, { uid: binding.metadata.uid });
    const policy = await env.client.tryGet(policyType, undefined, policyName);
    if (policy) await env.client.delete(policyType, undefined, policyName, { uid: policy.metadata.uid });
  };
}
