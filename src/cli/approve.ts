/**
 * `bundlesmith approve KIND/NAME -n NS`: approves the deletion of an object
 * whose deletionPolicy is Approve, by writing the deletionApproved
 * annotation. The approval is tied to the countdown it was given for: the
 * patch tests the uid and the stamp as read, and the time written is later
 * than the stamp (an approval no later than the stamp never counts, so one
 * left from an earlier countdown cannot approve a new one).
 */
import { Annotations } from '../api/names.js';
import { jsonPointerSegment } from '../core/bundle/objects.js';
import { formatRfc3339, parseRfc3339 } from '../core/rfc3339.js';
import { EXIT_PROBLEMS, type ObjectRef } from './args.js';
import type { Cluster } from './cluster.js';
import { serverNow } from './cluster-state.js';
import { CliError, type CliIo } from './io.js';
import { failed, pendingTarget } from './pending-target.js';

/** The approval time: now by the server's clock, and in any case after the stamp it approves. */
export function approvalTime(stampMs: number, serverNowMs: number): string {
  return formatRfc3339(Math.max(Math.ceil(serverNowMs), stampMs + 1));
}

export async function approveDeletion(cluster: Cluster, ref: ObjectRef, namespace: string, io: CliIo): Promise<void> {
  const target = await pendingTarget(cluster, ref, namespace);
  const { metadata } = target.object;
  const stamp = metadata.annotations?.[Annotations.deletionTimestamp] ?? '';
  const stampMs = parseRfc3339(stamp);
  if (stampMs === undefined)
    throw new CliError(
      `${target.ref} in ${namespace}: its ${Annotations.deletionTimestamp} ${JSON.stringify(stamp)} is not an RFC 3339 time; the operator restarts that countdown, approve after it does`,
      EXIT_PROBLEMS,
    );
  const approvedAt = approvalTime(stampMs, serverNow(cluster).stampAt);
  const ops: unknown[] = [
    { op: 'test', path: '/metadata/uid', value: metadata.uid },
    { op: 'test', path: `/metadata/annotations/${jsonPointerSegment(Annotations.deletionTimestamp)}`, value: stamp },
    { op: 'add', path: `/metadata/annotations/${jsonPointerSegment(Annotations.deletionApproved)}`, value: approvedAt },
  ];
  try {
    await cluster.client.patch(target.rt, namespace, metadata.name, ops, 'json', { fieldManager: 'bundlesmith-cli' });
  } catch (err) {
    throw failed('approve', target, err);
  }
  io.out(
    `approved: ${target.ref} in ${namespace} may be deleted once its delay has passed (approval ${approvedAt}, countdown from ${stamp})`,
  );
  if (metadata.annotations?.[Annotations.deletionPolicy] === undefined)
    io.out(
      `note: it carries no ${Annotations.deletionPolicy} annotation; the approval counts only where its Bundle's deletionDefaults say Approve`,
    );
}
