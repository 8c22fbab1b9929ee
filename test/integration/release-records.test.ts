/**
 * The records of releases' latest signings (controllers/softdelete/release-records.ts)
 * on the real API server: written and read back, dropped for an object that
 * is gone, and kept wherever that is in doubt (the object there under the
 * same uid, its kind not served now).
 */
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

async function configMap(name: string): Promise<{ uid: string }> {
  const rt = await resourceType(env, 'v1', 'ConfigMap');
  const made = await env.client.create(rt, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: {} });
  return { uid: made.metadata.uid ?? '' };
}

it('records, reads back, and writes again', async () => {
  const { uid } = await configMap(uniqueName('kept'));
  expect(await records.read(uid)).toBeUndefined();
  const object = { uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'x' };
  await records.record(object, '2026-11-27T10:00:00Z');
  expect(await records.read(uid)).toBe('2026-11-27T10:00:00Z');
  await records.record(object, '');
  expect(await records.read(uid)).toBe('');
});

it('prunes the record of an object that is gone, keeps the rest', async () => {
  const liveName = uniqueName('live');
  const live = await configMap(liveName);
  const goneName = uniqueName('gone');
  const gone = await configMap(goneName);
  const rt = await resourceType(env, 'v1', 'ConfigMap');
  await records.record({ uid: live.uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: liveName }, 'a');
  await records.record({ uid: gone.uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: goneName }, 'b');
  // A name taken again by another object: the record of the old uid goes.
  await env.client.delete(rt, ns, goneName, { uid: gone.uid });
  await configMap(goneName);
  // A kind not served now: whether its object is there cannot be told, so the record stays.
  const unserved = { uid: 'uid-of-an-unserved-kind', apiVersion: 'nowhere.bundlesmith.test/v1', kind: 'Nothing', namespace: ns, name: 'n' };
  await records.record(unserved, 'c');

  await records.pruneGone(Date.now(), env.discovery, silentLogger());
  expect(await records.read(live.uid)).toBe('a');
  expect(await records.read(gone.uid)).toBeUndefined();
  expect(await records.read(unserved.uid)).toBe('c');

  // Not again within ten minutes.
  await records.record({ uid: gone.uid, apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: goneName }, 'b');
  await records.pruneGone(Date.now(), env.discovery, silentLogger());
  expect(await records.read(gone.uid)).toBe('b');
});
