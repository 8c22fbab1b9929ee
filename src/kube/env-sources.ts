/**
 * Reading the ConfigMaps and Secrets a Bundle's workloads read, for their
 * envRefHash: what the caller already holds first (objects read at the
 * Bundle's own coordinates, the operator's cache), else a GET through the
 * given port, so a Bundle with an identity reads them as that identity (what
 * it may not read, it may not hash). Shared by the controller and the CLI's
 * `diff` / `pending`, which must decide on the same reads.
 */
import { configMapData, secretData, type EnvSourceRef } from '../core/bundle/env-ref-hash.js';
import type { LiveObject } from '../core/bundle/objects.js';
import type { EnvSourceRead } from '../core/bundle/plan.js';
import { errorMessage, isForbidden } from './errors.js';
import type { KubeObject, ResourceType } from './types.js';

export type SourceKind = EnvSourceRef['kind'];

const core = (kind: SourceKind, plural: string): ResourceType => ({
  group: '',
  version: 'v1',
  apiVersion: 'v1',
  kind,
  plural,
  namespaced: true,
  verbs: ['get', 'list', 'watch'],
});
export const SOURCE_RESOURCES: Readonly<Record<SourceKind, ResourceType>> = {
  ConfigMap: core('ConfigMap', 'configmaps'),
  Secret: core('Secret', 'secrets'),
};

export interface SourceReader {
  tryGet(rt: ResourceType, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
}

function dataOf(kind: SourceKind, o: LiveObject): EnvSourceRead {
  return kind === 'ConfigMap' ? configMapData({ data: o['data'], binaryData: o['binaryData'] }) : secretData({ data: o['data'] });
}

/**
 * Each source's data by `${kind}/${name}`, null when it does not exist. A 403
 * is that source's `unreadable` (the workload reports it); any other failure
 * fails the read. At most `concurrency` GETs in flight.
 */
export async function readEnvSources(
  api: SourceReader,
  namespace: string,
  sources: readonly { kind: SourceKind; name: string }[],
  known: (kind: SourceKind, name: string) => LiveObject | undefined,
  concurrency: number,
): Promise<Map<string, EnvSourceRead>> {
  const out = new Map<string, EnvSourceRead>();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < sources.length) {
      const { kind, name } = sources[next++] as { kind: SourceKind; name: string };
      const key = `${kind}/${name}`;
      const have = known(kind, name);
      if (have !== undefined) {
        out.set(key, dataOf(kind, have));
        continue;
      }
      try {
        const found = await api.tryGet(SOURCE_RESOURCES[kind], namespace, name);
        out.set(key, found === undefined ? null : dataOf(kind, found));
      } catch (err) {
        if (!isForbidden(err)) throw err;
        out.set(key, { unreadable: errorMessage(err) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, sources.length) }, lane));
  return out;
}
