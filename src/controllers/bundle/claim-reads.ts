/**
 * The fresh reads a pass makes of the objects its claim record names that
 * its caches did not show (the managed label taken off, a kind not watched):
 * each is read by name at the version its group and kind are served at now.
 * Found with the recorded UID, it joins what the pass decides on (a claim on
 * it is withdrawn when the Bundle no longer lists it); gone, or another
 * object under the name, its entry leaves the record. A read that cannot be
 * made proves nothing: the entry stays (core/bundle/claim-record.ts).
 */
import type { ClaimEntry } from '../../api/bundle-status.js';
import { groupOf, type LiveObject } from '../../core/bundle/objects.js';
import { errorMessage } from '../../kube/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { BundleApi } from './api.js';

export interface UnseenClaims {
  /** The recorded objects found, as read. */
  objects: LiveObject[];
  /** Uids of recorded objects found gone (or another object under the name). */
  gone: Set<string>;
}

export async function readUnseenClaims(
  api: Pick<BundleApi, 'resolveGroupKind' | 'tryGet'>,
  namespace: string,
  recorded: readonly ClaimEntry[],
  seen: ReadonlySet<string>,
  log: Logger,
): Promise<UnseenClaims> {
  const out: UnseenClaims = { objects: [], gone: new Set() };
  for (const entry of recorded) {
    if (seen.has(entry.uid)) continue;
    try {
      const found = await api.resolveGroupKind(groupOf(entry.apiVersion), entry.kind);
      if (found.state !== 'served') continue;
      const live = await api.tryGet(found.type, namespace, entry.name);
      if (live === undefined || live.metadata.uid !== entry.uid) out.gone.add(entry.uid);
      else out.objects.push(live);
    } catch (err) {
      log.debug(
        { object: { kind: entry.kind, name: entry.name }, err: errorMessage(err) },
        'could not read a recorded claim; its entry stays',
      );
    }
  }
  return out;
}
