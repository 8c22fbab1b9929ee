/**
 * A ValidatingAdmissionPolicy (and its binding) refusing, as Forbidden, one
 * operation on one object of a namespace: what another team's policy engine
 * may do. Returns what removes both (by UID).
 */
import { isForbidden } from '../../src/kube/errors.js';
import type { ResourceType } from '../../src/kube/types.js';
import type { TestEnv } from './harness.js';
import { resourceType, waitFor } from './harness.js';

const ADMISSION = 'admissionregistration.k8s.io/v1';

export async function refuseOperation(
  env: TestEnv,
  resource: { group: string; plural: string },
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
      matchConstraints: {
        resourceRules: [{ apiGroups: [resource.group], apiVersions: ['*'], operations: [operation], resources: [resource.plural] }],
      },
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

export function refuseConfigMapOperation(
  env: TestEnv,
  ns: string,
  name: string,
  operation: 'UPDATE' | 'DELETE',
  message: string,
): Promise<() => Promise<void>> {
  return refuseOperation(env, { group: '', plural: 'configmaps' }, ns, name, operation, message);
}

/** Waits until updates of the object are refused (a dry-run patch answers Forbidden): the policy is in force. */
export async function waitUntilUpdatesRefused(env: TestEnv, rt: ResourceType, ns: string, name: string): Promise<void> {
  await waitFor('the refusal to be in force', async () => {
    try {
      await env.client.patch(rt, ns, name, { metadata: { labels: { probe: 'x' } } }, 'merge', { dryRun: true });
      return false;
    } catch (err) {
      if (isForbidden(err)) return true;
      throw err;
    }
  });
}
