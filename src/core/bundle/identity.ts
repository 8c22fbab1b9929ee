/**
 * Whose rights a Bundle's requests use. A Bundle names a ServiceAccount of its
 * own namespace (spec.serviceAccountName), or the operator's lockdown default
 * (--default-service-account) names one for it; either way the operator
 * impersonates that account and the API server judges every request for the
 * Bundle's objects as that account's. Only with neither does the operator
 * write with its own rights (single-tenant clusters).
 */

export type ActingIdentity =
  | { kind: 'operator' }
  | {
      kind: 'service-account';
      namespace: string;
      name: string;
      /** The user the API server sees: system:serviceaccount:<namespace>:<name>. */
      user: string;
      /** Where the name came from, for status and logs. */
      source: 'spec' | 'default';
    };

export interface IdentityInput {
  metadata: { namespace: string };
  spec: { serviceAccountName?: string | undefined };
}

export function actingIdentity(bundle: IdentityInput, defaultServiceAccount?: string): ActingIdentity {
  const fromSpec = bundle.spec.serviceAccountName;
  const name = fromSpec ?? defaultServiceAccount;
  if (name === undefined || name === '') return { kind: 'operator' };
  const namespace = bundle.metadata.namespace;
  return {
    kind: 'service-account',
    namespace,
    name,
    user: serviceAccountUser(namespace, name),
    source: fromSpec !== undefined ? 'spec' : 'default',
  };
}

export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}
