/**
 * The records of releases' latest signings (controllers/softdelete/release-records.ts)
 * on the real API server: written and read back, signed again only over the
 * recorded release, ended by a take-hold; dropped for an object that is
 * gone, and kept wherever that is in doubt (the object there under the same
 * uid, its kind not served now).
 */
import { Labels } from '../../src/api/names.js';
import { ReleaseRecords } from '../../src/controllers/softdelete/release-records.js';
import { silentLogger } from '../../src/observability/logger.js';
import { connect, createNamespace, resourceType, uniqueName, type TestEnv } from './harness.js';

let env: TestEnv;
let ns: string;
let records: ReleaseRecords;
const KEY_NAME = 'release-key';

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'records');
  records = new ReleaseRecords(env.client, { namespace: ns, name: KEY_NAME });
});
afterAll(() => env.close());

async function configMap(name: string, labels: Record<string, string> = {}): Promise<{ uid: string }> {
  const rt = await resourceType(env, 'v1', 'ConfigMap');
  const made = await env.client.create(rt, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels }, data: {} });
  return { uid: made.metadata.uid ?? '' };
}

const patchSigning = (proof: string) => [
  { op: 'add' as const, path: '/metadata/annotations/smith.atlassian.com~1release-proof', value: proof },
];
const carrying = (proof: string) => ({ annotations: { 'smith.atlassian.com/release-proof': proof } });

it('records signings; signs again only over the recorded release; a take-hold ends it', async () => {
  const { uid } = await configMap(uniqueName('kept'));
  const object = { uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'x' };
  expect(await records.read(uid)).toBeUndefined();
  expect(await records.recordSigning(object, patchSigning('v2:first'))).toBe(true);
  expect(await records.read(uid)).toEqual({ state: 'signed', proof: 'v2:first' });
  // The sweep signs again only the release the object carries.
  expect(await records.recordSigning(object, patchSigning('v2:second'), carrying('v2:earlier'))).toBe(false);
  expect(await records.recordSigning(object, patchSigning('v2:second'), carrying('v2:first'))).toBe(true);
  expect(await records.read(uid)).toEqual({ state: 'signed', proof: 'v2:second' });
  await records.end(object);
  expect(await records.read(uid)).toEqual({ state: 'ended', proof: '' });
  expect(await records.recordSigning(object, patchSigning('v2:third'), carrying('v2:second'))).toBe(false);
  // A new release (the finalizer's) is recorded whatever was there.
  expect(await records.recordSigning(object, patchSigning('v2:fourth'))).toBe(true);
  expect(await records.read(uid)).toEqual({ state: 'signed', proof: 'v2:fourth' });
});

it('prunes the record of an object that is gone, ends that of one no longer released, keeps the rest', async () => {
  const liveName = uniqueName('live');
  const live = await configMap(liveName, { [Labels.formerBundle]: 'b' });
  const cancelledName = uniqueName('cancelled');
  const cancelled = await configMap(cancelledName);
  await records.recordSigning(
    { uid: cancelled.uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: cancelledName },
    patchSigning('v2:d'),
  );
  const goneName = uniqueName('gone');
  const gone = await configMap(goneName);
  const rt = await resourceType(env, 'v1', 'ConfigMap');
  await records.recordSigning({ uid: live.uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: liveName }, patchSigning('v2:a'));
  await records.recordSigning({ uid: gone.uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: goneName }, patchSigning('v2:b'));
  // A name taken again by another object: the record of the old uid goes.
  await env.client.delete(rt, ns, goneName, { uid: gone.uid });
  await configMap(goneName);
  // A kind not served now: whether its object is there cannot be told, so the record stays.
  const unserved = { uid: 'uid-of-an-unserved-kind', apiVersion: 'nowhere.bundlesmith.test/v1', kind: 'Nothing', namespace: ns, name: 'n' };
  await records.recordSigning(unserved, patchSigning('v2:c'));

  await records.pruneGone(Date.now(), env.discovery, silentLogger());
  expect(await records.read(live.uid)).toEqual({ state: 'signed', proof: 'v2:a' });
  expect(await records.read(gone.uid)).toBeUndefined();
  expect(await records.read(unserved.uid)).toEqual({ state: 'signed', proof: 'v2:c' });
  // There, and carrying no release's marks (`bundlesmith cancel` took them off): its release ended.
  expect(await records.read(cancelled.uid)).toEqual({ state: 'ended', proof: '' });

  // Not again within ten minutes.
  await records.recordSigning({ uid: gone.uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: goneName }, patchSigning('v2:b'));
  await records.pruneGone(Date.now(), env.discovery, silentLogger());
  expect(await records.read(gone.uid)).toEqual({ state: 'signed', proof: 'v2:b' });
});
