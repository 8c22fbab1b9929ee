/**
 * The key releases are signed with (core/softdelete/provenance.ts): 32
 * random bytes in a Secret of the operator's own namespace, created by the
 * first replica that finds none. Bundle authors cannot read it (the chart
 * grants get on that one Secret to the operator alone), so they cannot
 * forge a release. Every replica reads the same Secret, so a standby that
 * takes over checks the proofs its predecessor wrote; deleting the Secret
 * makes every outstanding release unproven (kept, reported), never deletable.
 */
import { randomBytes } from 'node:crypto';
import { RELEASE_KEY_MIN_BYTES } from '../../core/softdelete/provenance.js';
import type { KubeClient } from '../../kube/client.js';
import { isAlreadyExists } from '../../kube/errors.js';
import type { KubeObject, ResourceType } from '../../kube/types.js';

const SECRET_RESOURCE: ResourceType = {
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  namespaced: true,
  verbs: ['get', 'create'],
};

/** Where the key lives: `--release-key-secret NAMESPACE/NAME`. */
export interface ReleaseKeySecret {
  namespace: string;
  name: string;
}

/** The Secret's name unless --release-key-secret says otherwise (in the leader-election namespace). */
export const DEFAULT_RELEASE_KEY_SECRET = 'bundlesmith-release-key';

/** The data key inside the Secret. */
const DATA_KEY = 'key';

/** Reads the key, creating the Secret first when there is none (a race between replicas ends with both reading the winner's). */
export async function loadReleaseKey(client: KubeClient, at: ReleaseKeySecret): Promise<Uint8Array> {
  const existing = await client.tryGet(SECRET_RESOURCE, at.namespace, at.name);
  if (existing !== undefined) return keyOf(existing, at);
  try {
    const created = await client.create(SECRET_RESOURCE, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: {
        name: at.name,
        namespace: at.namespace,
        labels: { 'app.kubernetes.io/name': 'bundlesmith', 'app.kubernetes.io/component': 'release-key' },
      },
      data: { [DATA_KEY]: randomBytes(RELEASE_KEY_MIN_BYTES).toString('base64') },
    });
    return keyOf(created, at);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    return keyOf(await client.get(SECRET_RESOURCE, at.namespace, at.name), at);
  }
}

function keyOf(secret: KubeObject, at: ReleaseKeySecret): Uint8Array {
  const data = (secret as { data?: unknown }).data;
  const encoded = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[DATA_KEY] : undefined;
  const key = typeof encoded === 'string' ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length < RELEASE_KEY_MIN_BYTES) {
    throw new Error(
      `release key Secret ${at.namespace}/${at.name}: data.${DATA_KEY} must hold at least ${RELEASE_KEY_MIN_BYTES} bytes (base64); delete the Secret to have a new key made (outstanding releases are then kept, not swept)`,
    );
  }
  return new Uint8Array(key);
}

/** Parses `NAMESPACE/NAME`. */
export function parseReleaseKeySecret(text: string): ReleaseKeySecret | undefined {
  const [namespace, name, ...rest] = text.split('/');
  if (namespace === undefined || name === undefined || rest.length > 0 || namespace === '' || name === '') return undefined;
  return { namespace, name };
}
